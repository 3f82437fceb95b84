// The MCP conformance suite (0.1.16) imports fs.globSync, which Node gained in 22. On Node 20 this
// hook hands the suite a `fs` that adds a small globSync (the suite only uses `**/<file name>`
// patterns, to gather its own result files). Loaded with: node --import ./test/mcp/node20-fs-glob.mjs
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
    export async function resolve(specifier, context, next) {
      if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('@modelcontextprotocol/conformance'))
        return { url: ${JSON.stringify(new URL('./fs-with-glob.mjs', import.meta.url).href)}, shortCircuit: true };
      return next(specifier, context);
    }
  `)}`,
);
