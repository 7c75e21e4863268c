// A stdio MCP server on the official TypeScript SDK (the one server-everything is built on)
// that drives the client's tasks as a requestor: it sends task-augmented elicitation/create
// and sampling/createMessage, then tasks/list, tasks/get, tasks/cancel and tasks/result, as
// server-everything's own tools never do. The SDK checks every answer against its schemas.
// Each tool returns what it saw as JSON text: {step: result} or {step: {error: {code, message}}}.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
    CallToolRequestSchema, CreateTaskResultSchema, ElicitResultSchema, CreateMessageResultSchema, ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'task-requestor', version: '1.0.0' }, { capabilities: { tools: {} } });

const QUESTION = {
    mode: 'form',
    message: 'Which colour? (asked as a task)',
    requestedSchema: { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] },
};

const tools = {
    // Ask as a task, list and look at it, cancel it, and try what a cancelled task allows.
    'ask-then-cancel': async () => {
        const seen = {};
        const created = await server.request({ method: 'elicitation/create', params: QUESTION }, CreateTaskResultSchema,
            { task: { ttl: 60000 } });
        const taskId = created.task.taskId;
        seen.created = created.task;
        seen.listed = await step(() => server.listTasks());
        seen.before = await step(() => server.getTask({ taskId }));
        seen.cancelled = await step(() => server.cancelTask({ taskId }));
        seen.after = await step(() => server.getTask({ taskId }));
        seen.again = await step(() => server.cancelTask({ taskId }));
        seen.result = await step(() => server.getTaskResult({ taskId }, ElicitResultSchema));
        return seen;
    },
    // Ask as a task and wait on tasks/result at once (held until the task ends or is forgotten).
    'ask-and-wait': async ({ ttl }) => {
        const seen = {};
        const created = await server.request({ method: 'elicitation/create', params: QUESTION }, CreateTaskResultSchema,
            { task: { ttl } });
        const taskId = created.task.taskId;
        seen.created = created.task;
        seen.result = await step(() => server.getTaskResult({ taskId }, ElicitResultSchema));
        seen.after = await step(() => server.getTask({ taskId }));
        return seen;
    },
    // Start `count` sampling tasks, then page through tasks/list; and a cursor we made up.
    'many-tasks': async ({ count }) => {
        const seen = { created: [], pages: [] };
        for (let i = 0; i < count; i++) {
            const params = { messages: [{ role: 'user', content: { type: 'text', text: `task ${i}` } }], maxTokens: 10 };
            const created = await server.request({ method: 'sampling/createMessage', params }, CreateTaskResultSchema,
                { task: { ttl: 60000 } });
            seen.created.push(created.task.taskId);
        }
        let cursor;
        do {
            const page = await server.listTasks(cursor ? { cursor } : undefined);
            seen.pages.push({ ids: page.tasks.map(t => t.taskId), nextCursor: page.nextCursor ?? null });
            cursor = page.nextCursor;
        } while (cursor);
        seen.badCursor = await step(() => server.listTasks({ cursor: 'not-a-cursor' }));
        const last = seen.created[count - 1];
        seen.lastResult = await step(() => server.getTaskResult({ taskId: last }, CreateMessageResultSchema));
        return seen;
    },
};

async function step(fn) {
    try {
        return await fn();
    } catch (error) {
        return { error: { code: error.code ?? null, message: String(error.message ?? error) } };
    }
}

server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: Object.keys(tools).map(name => ({ name, inputSchema: { type: 'object' } })),
}));

server.setRequestHandler(CallToolRequestSchema, async request => {
    const seen = await tools[request.params.name](request.params.arguments ?? {});
    return { content: [{ type: 'text', text: JSON.stringify(seen) }] };
});

await server.connect(new StdioServerTransport());
