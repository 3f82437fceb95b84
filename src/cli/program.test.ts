import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { CliRuntime } from './cli-runtime.ts';
import { buildProgram, commandNamed, commandRegistrations } from './program.ts';

const names = (program: Command) => program.commands.map((command) => command.name());
const argv = (...words: string[]) => ['node', 'quarry', ...words];

describe('the command table', () => {
  it('names every command the registrations add, in help order', () => {
    const program = buildProgram(new CliRuntime({}), () => undefined);
    expect(names(program)).toEqual([...commandRegistrations.keys()]);
  });

  it('maps each name to the registration that adds it', () => {
    for (const [name, register] of commandRegistrations) {
      const program = new Command('quarry');
      register(program, new CliRuntime({}), () => undefined);
      expect(names(program), name).toContain(name);
    }
  });

  it('builds only the command a command line names, and every command otherwise', () => {
    const all = [...commandRegistrations.keys()];
    const built = (...words: string[]) => names(buildProgram(new CliRuntime({}), () => undefined, argv(...words)));
    expect(built('ls', '--limit', '5')).toEqual(['ls']);
    expect(built('rename', 'abc', 'New title')).toEqual(['rename', 'rm', 'stop', 'gc']);
    expect(built('--help')).toEqual(all);
    expect(built('help', 'ls')).toEqual(all);
    expect(built('frobnicate')).toEqual(all);
    expect(built()).toEqual(all);
  });

  it('finds the command after global options and their values', () => {
    expect(commandNamed(argv('--db', 'ls', 'show'))).toBe('show');
    expect(commandNamed(argv('--db=/tmp/q.db', '--json', 'ls'))).toBe('ls');
    expect(commandNamed(argv('--json', '--', 'export', 'abc'))).toBe('export');
    expect(commandNamed(argv('--version'))).toBeUndefined();
    expect(commandNamed(argv('lss'))).toBeUndefined();
  });
});
