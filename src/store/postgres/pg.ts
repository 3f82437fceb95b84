import { createRequire } from 'node:module';
import type Pg from 'pg';

// Required, not imported: importing a CommonJS package from an ES module makes Node scan its source
// for export names first.
const requirePg = () => createRequire(import.meta.url)('pg') as typeof Pg;

/**
 * The `pg` package, loaded without its Cloudflare Workers probe costing a CLI command 16 ms. On load,
 * pg looks for `navigator.userAgent`; Node 20 has no `navigator`, so pg builds a fetch `Response`
 * instead, which loads Node's whole fetch implementation (undici). Node 21 and later answer with a
 * `navigator` of their own; for the moment pg loads, Node 20 gets the same answer.
 */
function loadPg(): typeof Pg {
  if ('navigator' in globalThis) return requirePg();
  Object.defineProperty(globalThis, 'navigator', {
    value: { userAgent: `Node.js/${process.versions.node.split('.')[0]}` },
    configurable: true,
  });
  try {
    return requirePg();
  } finally {
    Reflect.deleteProperty(globalThis, 'navigator');
  }
}

const pg = loadPg();
export default pg;
