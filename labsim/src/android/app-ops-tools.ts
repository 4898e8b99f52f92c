/** `appops` and `cmd notification`: the permission switches a client flips for an app, kept per package. */
import type { PackageManager } from './packages';
import type { ToolIO } from './tool-io';

export interface AppOpsContext {
  pm: PackageManager;
  /** App op modes set with `appops set` ("<package> <OP>" -> mode). */
  appOps: Map<string, string>;
}

/** `appops set|get <package> <op> [mode]`: modes are kept per package and op. */
export function appops(ctx: AppOpsContext, args: string[], io: ToolIO): number {
  const words = args.filter((a, i) => a !== '--user' && args[i - 1] !== '--user' && a !== '--uid');
  const [verb, pkg, op, mode] = words;
  if ((verb === 'set' || verb === 'get') && pkg && !ctx.pm.get(pkg)) {
    io.err(`Error: Unknown package: ${pkg}\n`);
    return 255;
  }
  if (verb === 'set' && pkg && op && mode) {
    if (!['allow', 'deny', 'ignore', 'default', 'foreground'].includes(mode)) {
      io.err(`Error: Mode ${mode} is not valid\n`);
      return 255;
    }
    ctx.appOps.set(`${pkg} ${op.replace(/^android:/, '').toUpperCase()}`, mode);
    return 0;
  }
  if (verb === 'get' && pkg) {
    const ops = [...ctx.appOps].filter(([k]) => k.startsWith(`${pkg} `) && (!op || k.endsWith(` ${op.replace(/^android:/, '').toUpperCase()}`)));
    io.out(ops.length ? ops.map(([k, v]) => `${k.split(' ')[1]}: ${v}\n`).join('') : 'No operations.\n');
    return 0;
  }
  io.err('AppOps service (appops) commands:\n  set [--user <USER_ID>] <PACKAGE | UID> <OP> <MODE>\n  get [--user <USER_ID>] <PACKAGE | UID> [<OP>]\n');
  return 255;
}

/** `cmd notification allow_listener|disallow_listener <component>`: no output on success. */
export function notification(ctx: AppOpsContext, args: string[], io: ToolIO): number {
  const [verb, component] = args;
  if ((verb === 'allow_listener' || verb === 'disallow_listener') && component) {
    if (!ctx.pm.get(component.split('/')[0])) {
      io.err(`Invalid listener - must be a ComponentName\n`);
      return 255;
    }
    return 0;
  }
  io.err(`Unknown command: ${verb ?? ''}\n`);
  return 255;
}
