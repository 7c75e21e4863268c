'use strict';
// Preload for test peers: `node -r ./loopback.cjs server.js ...`
//
// Makes every net.Server (and so http/https/express servers) bind to
// 127.0.0.1 when the caller gives no host. Node's default is the unspecified
// address (:: / 0.0.0.0), i.e. all interfaces; test peers must never do that.
//
// Handled call shapes (see lib/net.js normalizeArgs):
//   listen()                      listen(cb)
//   listen(port)                  listen(port, cb)
//   listen(port, backlog[, cb])   listen(options[, cb])   (options.port, no host)
// Left untouched: an explicit host string, pipe paths, handles and fds.
// MCP_PEER_HOST overrides the default host (tests only ever use loopback).

const net = require('node:net');

const HOST = process.env.MCP_PEER_HOST || '127.0.0.1';
const originalListen = net.Server.prototype.listen;

function isPort(value) {
  if (typeof value === 'number') return true;
  return typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value));
}

function loopbackListen(...args) {
  const cb = typeof args[args.length - 1] === 'function' ? args.pop() : undefined;
  const withCb = (rest) => (cb ? [...rest, cb] : rest);
  const first = args[0];

  // listen() / listen(cb): random port on loopback.
  if (args.length === 0 || first === undefined || first === null) {
    return originalListen.apply(this, withCb([{ port: 0, host: HOST }]));
  }

  // listen(port[, host][, backlog])
  if (isPort(first)) {
    if (typeof args[1] === 'string') {
      return originalListen.apply(this, withCb(args)); // host given explicitly
    }
    const options = { port: Number(first), host: HOST };
    const backlog = [args[1], args[2]].find((v) => typeof v === 'number');
    if (backlog !== undefined) options.backlog = backlog;
    return originalListen.apply(this, withCb([options]));
  }

  // listen(options[, cb]) with a TCP port and no host.
  if (typeof first === 'object' && !Array.isArray(first)) {
    const isHandle = '_handle' in first || 'fd' in first || 'handle' in first;
    const isPipe = typeof first.path === 'string';
    if (!isHandle && !isPipe && (first.host === undefined || first.host === null || first.host === '')) {
      return originalListen.apply(this, withCb([{ ...first, host: HOST }, ...args.slice(1)]));
    }
  }

  // Pipe names, handles, explicit hosts: untouched.
  return originalListen.apply(this, withCb(args));
}

net.Server.prototype.listen = loopbackListen;
