import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validate } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** `docker-compose` (Debian's, v1) checks a compose file without a container runtime. */
function composeSkipReason(): string | null {
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) return null;
  if (process.env.CI === 'true') throw new Error('CI=true but docker-compose is missing: .ci/run must install it.');
  return 'docker-compose is not installed (apt-get install docker-compose)';
}

describe('the deployment files (linted: no container runtime here)', () => {
  it('has a Dockerfile that lints clean and ships what the package ships, as a user without root', () => {
    const dockerfile = read('Dockerfile');
    expect(
      validate(dockerfile).map((diagnostic) => `${diagnostic.range.start.line + 1}: ${diagnostic.message}`),
    ).toEqual([]);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const { files } = JSON.parse(read('package.json')) as { files: string[] };
    for (const shipped of files.filter((file) => ['bin', 'dist', 'web/dist'].includes(file)))
      expect(runtime).toContain(`COPY --from=build /app/${shipped} ./${shipped}`);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK /m);
    expect(runtime).toContain('ENTRYPOINT ["node", "bin/quarry"]');
    // The build context leaves out what the build makes and local stores.
    expect(read('.dockerignore').split('\n')).toEqual(expect.arrayContaining(['node_modules', 'dist', '*.db']));
  });

  const skip = composeSkipReason();
  it.skipIf(skip !== null)(
    `has a compose file docker-compose accepts: PostgreSQL, two API nodes, three workers, Prometheus${skip ? ` (skipped: ${skip})` : ''}`,
    () => {
      const checked = spawnSync('docker-compose', ['-f', join(root, 'compose.yaml'), 'config'], { encoding: 'utf8' });
      expect(checked.status, checked.stderr).toBe(0);
      const compose = parse(checked.stdout) as {
        services: Record<
          string,
          {
            command?: string[];
            deploy?: { replicas?: number };
            healthcheck?: { test: string[] };
            environment?: Record<string, string>;
          }
        >;
      };
      const { services } = compose;
      expect(Object.keys(services).sort()).toEqual(['api-1', 'api-2', 'postgres', 'prometheus', 'worker']);
      for (const api of ['api-1', 'api-2']) {
        expect(services[api]!.command).toEqual(['serve', '--host', '0.0.0.0', '--port', '7777', '--no-runner']);
        expect(services[api]!.healthcheck!.test.join(' ')).toContain('/readyz');
        expect(services[api]!.environment!.QUARRY_DB).toMatch(/^postgres:\/\/.+@postgres:5432\//);
      }
      expect(services.worker!.deploy!.replicas).toBe(3);
      expect(services.worker!.command).toEqual(expect.arrayContaining(['worker', '--metrics-port', '9464']));
      // Prometheus scrapes both API nodes and every worker replica on the ports they serve metrics on.
      const prometheus = parse(read('deploy/prometheus.yml')) as {
        scrape_configs: {
          job_name: string;
          static_configs?: { targets: string[] }[];
          dns_sd_configs?: { names: string[]; port: number }[];
        }[];
      };
      const jobs = Object.fromEntries(prometheus.scrape_configs.map((job) => [job.job_name, job]));
      expect(jobs['quarry-api']!.static_configs![0]!.targets).toEqual(['api-1:7777', 'api-2:7777']);
      expect(jobs['quarry-worker']!.dns_sd_configs![0]).toMatchObject({ names: ['worker'], port: 9464 });
      expect(existsSync(join(root, 'deploy', 'prometheus.yml'))).toBe(true);
    },
  );
});
