/**
 * `npm run bench`: the comparison with the alternatives (a few minutes), written to
 * bench/RESULTS.md with the machine and the date. `npm run bench -- all` runs every benchmark;
 * `npm run bench -- store engine` runs groups; any script name runs that script. Every script also
 * runs alone (`node --import tsx bench/<path>.ts`). Numbers, never assertions.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem, type } from 'node:os';

const groups: Record<string, string[]> = {
  compare: [
    'compare/compare-steps',
    'compare/compare-resume',
    'compare/compare-listing',
    'compare/compare-crash',
    'compare/compare-fanout',
    'compare/compare-saver-crash',
    'compare/compare-saver-writes',
  ],
  store: ['store-storage', 'store-listing', 'store-commit-latency', 'store-search'],
  engine: ['engine-overhead', 'engine-resume'],
  sources: ['corpus-index', 'html-index', 'format-index'],
  api: ['api-load', 'answer-stream', 'event-delivery', 'sse-storm'],
  workers: ['workers'],
  quality: ['research-quality'],
  cli: ['cli-start'],
};

const requested = process.argv.slice(2);
if (requested.some((name) => name === '--help' || name === '-h')) {
  console.log(
    [
      'npm run bench -- [group|script|all]...   (no argument: compare)',
      '',
      'Groups and their scripts (bench/<script>.ts; each also runs alone with node --import tsx):',
      ...Object.entries(groups).map(([group, members]) => `  ${group.padEnd(8)} ${members.join(', ')}`),
      '',
      'The compare group writes bench/RESULTS.md; bench/README.md says what each measures.',
    ].join('\n'),
  );
  process.exit(0);
}
const names = requested.length === 0 ? ['compare'] : requested;
const scripts = names.flatMap((name) => (name === 'all' ? Object.values(groups).flat() : (groups[name] ?? [name])));
const unknown = scripts.filter((script) => !existsSync(new URL(`./${script}.ts`, import.meta.url)));
if (unknown.length > 0) {
  console.error(`bench: no group or script named ${unknown.join(', ')}; npm run bench -- --help lists them.`);
  process.exit(2);
}

const machine = `${type()} ${release()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · ${(totalmem() / 2 ** 30).toFixed(0)} GB`;
const output: string[] = [
  `# Quarry benchmark results`,
  '',
  `${new Date().toISOString()} · ${machine}`,
  '',
  `Scripts: ${scripts.join(', ')}.`,
];
const log = console.log;
console.log = (...parts: unknown[]) => {
  output.push(parts.map(String).join(' '));
  log(...parts);
};
log(output.join('\n'));
for (const script of scripts) {
  const module = (await import(`./${script}.ts`)) as { run(): Promise<void> };
  await module.run();
}
console.log = log;
if (scripts.some((script) => script.startsWith('compare/'))) {
  writeFileSync(new URL('./RESULTS.md', import.meta.url), `${output.join('\n')}\n`);
  log('\nWrote bench/RESULTS.md');
}
