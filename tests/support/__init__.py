"""Helpers the tests share: commands that start the peers, the schema checker, kernels, browsers,
waits. Test modules import from here (`from support.servers import sdk_server_cmd`) and never from
one another; fixtures live in each folder's conftest.py."""
