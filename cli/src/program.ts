/** The `devicelab` command tree (commander): global options, every command, usage errors as exit code 2. */
import { Command, CommanderError } from 'commander';
import { registerAdminCommands } from './commands/admin';
import { registerAppCommands } from './commands/apps';
import { registerAppiumCommand } from './commands/appium';
import { registerConnectCommand } from './commands/connect';
import { registerDeviceControlCommands } from './commands/device-control';
import { registerDeviceCommands } from './commands/devices';
import { registerLeaseCommands } from './commands/leases';
import { registerRunCommand } from './commands/run';
import { bashCompletion, zshCompletion } from './completion';
import { action, type Context } from './context';
import { EXIT, usageError } from './errors';

export const VERSION = '0.1.0';

export function buildProgram(): Command {
  const program = new Command('devicelab')
    .description('The DeviceLab client: find and retain devices, run tests on them, install apps, read logs and metrics.')
    .version(VERSION, '-V, --version')
    .option('--url <url>', 'hub address (default: DEVICELAB_URL, else the one `devicelab login` stored)')
    .option('--user <login>', 'your login (default: DEVICELAB_USER, else stored)')
    .option('--token <token>', 'your API token (default: DEVICELAB_TOKEN, else stored)')
    .option('--json', 'print one JSON document on stdout (diagnostics stay on stderr)')
    .showHelpAfterError('(run with --help for usage and examples)')
    .exitOverride()
    .addHelpText('after', `
Exit codes: 0 ok, 1 the hub answered a failure, 2 usage error, 3 no matching device free within --wait,
4 not authorised, 5 hub unreachable, 124 timed out, 129/130/143 stopped by SIGHUP/SIGINT/SIGTERM;
\`run\` exits with its command's code.

Examples:
  devicelab login --url http://devicelab.example:8080 --user qa@example.com --token <token>
  devicelab devices --filter os=android,free
  devicelab run --filter os=android,minOs=13 --wait 10m --install app.apk -- ./gradlew connectedCheck`);

  registerDeviceCommands(program);
  registerRunCommand(program);
  registerAppiumCommand(program);
  registerLeaseCommands(program);
  registerAppCommands(program);
  registerDeviceControlCommands(program);
  registerConnectCommand(program);
  registerAdminCommands(program);

  program.command('completion')
    .argument('<shell>', 'bash or zsh')
    .description('Print a shell completion script.')
    .addHelpText('after', '\nExamples:\n  devicelab completion bash > ~/.local/share/bash-completion/completions/devicelab\n'
      + '  devicelab completion zsh > "${fpath[1]}/_devicelab"\n  source <(devicelab completion bash)   # this shell only')
    .action(action(async (_ctx: Context, shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh') throw usageError(`No completion for '${shell}': use bash or zsh.`);
      process.stdout.write(shell === 'bash' ? bashCompletion(program) : zshCompletion(program));
    }));
  return program;
}

/** Runs the CLI on `argv` (without node and script); resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  for (const command of allCommands(program)) command.exitOverride();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT.ok;
      if (err.code === 'commander.executeSubCommandAsync') return EXIT.ok;
      return EXIT.usage;
    }
    throw err;
  }
}

function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)];
}
