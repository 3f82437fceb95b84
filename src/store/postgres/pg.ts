import type Pg from 'pg';

/**
 * The `pg` package, loaded without its Cloudflare Workers probe costing a CLI command 16 ms. On load,
 * pg looks for `navigator.userAgent`; Node 20 has no `navigator`, so pg builds a fetch `Response`
 * instead, which loads Node's whole fetch implementation (undici). Node 21 and later answer with a
 * `navigator` of their own; for the moment pg loads, Node 20 gets the same answer. The CLI's build
 * bundles pg, so this import is resolved at build time, not file by file at start.
 */
async function loadPg(): Promise<typeof Pg> {
  if ('navigator' in globalThis) return (await import('pg')).default;
  Object.defineProperty(globalThis, 'navigator', {
    value: { userAgent: `Node.js/${process.versions.node.split('.')[0]}` },
    configurable: true,
  });
  try {
    return (await import('pg')).default;
  } finally {
    Reflect.deleteProperty(globalThis, 'navigator');
  }
}

const pg = await loadPg();
export default pg;
