import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { LOCAL_OWNER } from '../../service/service-context.ts';
import { signInBrowser, signOutBrowser } from '../../service/users.ts';
import { isQuarryError } from '../../shared/errors.ts';
import { authModeOf, TOKEN_COOKIE } from '../auth.ts';
import { clientAddress } from '../client-limits.ts';
import type { AppEnv, ServerDependencies } from '../server-env.ts';
import { throwValidationError } from '../validation-hook.ts';
import { errorResponses } from '../wire.ts';

const tags = ['account'];
const whoSchema = z.object({
  user: z.object({ id: z.string(), name: z.string() }).nullable(),
  auth: z.enum(['local', 'tokens']),
  localSessions: z
    .number()
    .int()
    .optional()
    .describe(
      'Signed in: how many sessions of this server were made before it had users (they belong to the local user, not to anyone signed in; `quarry users adopt <name>` hands them over). Absent when none.',
    ),
});

/** Sessions made before the server had users, for a signed-in reader to be told about (never silently hidden). */
async function localSessions(dependencies: ServerDependencies): Promise<{ localSessions?: number }> {
  const count = await dependencies.store.countSessions({ ownerId: LOCAL_OWNER });
  return count > 0 ? { localSessions: count } : {};
}

const signIn = createRoute({
  method: 'post',
  path: '/session',
  tags,
  // Answers without a token: it is where a token is presented.
  security: [],
  summary:
    'Sign in with an API token (the web UI): the browser gets a token of its own, minted from it, valid 7 days at most (never longer than the API token, and revoked with it), in an HttpOnly cookie',
  request: {
    body: {
      required: true,
      content: { 'application/json': { schema: z.object({ token: z.string().min(1).max(200) }).strict() } },
    },
  },
  responses: {
    200: { description: 'Signed in', content: { 'application/json': { schema: whoSchema } } },
    401: errorResponses[401],
  },
});

const signOut = createRoute({
  method: 'delete',
  path: '/session',
  tags,
  summary: 'Sign out: revokes the browser’s token and clears the cookie',
  responses: { 204: { description: 'Signed out' } },
});

const whoAmI = createRoute({
  method: 'get',
  path: '/me',
  tags,
  summary: 'Who the request acts as',
  responses: {
    200: { description: 'The user', content: { 'application/json': { schema: whoSchema } } },
    401: errorResponses[401],
  },
});

/** Sign-in and sign-out, reachable without a token (they are how a browser gets and drops one). */
export function publicAccountRoutes(dependencies: ServerDependencies) {
  return new OpenAPIHono<AppEnv>({ defaultHook: throwValidationError })
    .openapi(signIn, async (c) => {
      if ((await authModeOf(dependencies, c)) === 'local') return c.json({ user: null, auth: 'local' as const }, 200);
      const client = clientAddress(c);
      dependencies.authThrottle.check(client);
      const { user, token, expiresAt } = await signInBrowser(dependencies.store, c.req.valid('json').token).catch(
        (error: unknown) => {
          if (isQuarryError(error, 'UNAUTHORIZED')) dependencies.authThrottle.fail(client);
          throw error;
        },
      );
      // Kept as long as the sign-in lasts; never readable by scripts; never sent cross-site; over
      // https only when the server is reached over https (the operator's public URL, or the proxy says so).
      setCookie(c, TOKEN_COOKIE, token, {
        httpOnly: true,
        sameSite: 'Strict',
        path: '/',
        maxAge: Math.max(1, Math.floor((expiresAt - Date.now()) / 1000)),
        secure:
          dependencies.secureCookies ||
          new URL(c.req.url).protocol === 'https:' ||
          c.req.header('x-forwarded-proto')?.split(',')[0]?.trim() === 'https',
      });
      return c.json(
        { user: { id: user.id, name: user.name }, auth: 'tokens' as const, ...(await localSessions(dependencies)) },
        200,
      );
    })
    .openapi(signOut, async (c) => {
      const token = getCookie(c, TOKEN_COOKIE);
      if (token) await signOutBrowser(dependencies.store, token);
      deleteCookie(c, TOKEN_COOKIE, { path: '/' });
      return c.body(null, 204);
    });
}

/** `GET /api/auth/me`, behind authentication. */
export function accountRoutes(dependencies: ServerDependencies) {
  return new OpenAPIHono<AppEnv>({ defaultHook: throwValidationError }).openapi(whoAmI, async (c) =>
    c.json(
      {
        user: c.get('user'),
        auth: c.get('auth'),
        ...(c.get('auth') === 'tokens' ? await localSessions(dependencies) : {}),
      },
      200,
    ),
  );
}
