/**
 * Commands: the hub sends a device command (install, launch, reboot, ...) to the gateway holding the device and
 * matches its result by command id; progress reaches the caller while it runs. A session that ends fails its
 * pending commands (except while the hub stops: the gateway goes on with them and the next start reconciles).
 */
import { randomUUID } from 'node:crypto';
import type { CommandAction, CommandResult } from '@devicelab/proto';
import { applyDeviceState } from '../device-inventory';
import { GatewayUnavailableError } from '../gateway-directory';
import type { GatewaySession } from '../gateway-session';
import type { ChannelContext, HubChannel, SessionChannel, SessionEnd } from '../link/channel';

export interface CommandsChannel extends HubChannel {
  /** Sends a command to this session's gateway (`vendorUniqueIdentifier` '' for one about the gateway's USB hubs). */
  send(session: GatewaySession, vendorUniqueIdentifier: string, action: CommandAction, timeoutMs: number,
    onProgress?: (percent: number) => void): Promise<CommandResult>;
}

interface PendingCommand {
  resolve(result: CommandResult): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
  onProgress?: (percent: number) => void;
}

export function commandsChannel(ctx: ChannelContext): CommandsChannel {
  const bySession = new WeakMap<GatewaySession, SessionCommands>();
  const send: CommandsChannel['send'] = (session, ...command) => {
    const commands = bySession.get(session);
    if (!commands || session.isEnded) {
      return Promise.reject(new GatewayUnavailableError(`Gateway ${session.gatewayName} is not connected.`));
    }
    return commands.send(...command);
  };
  return {
    open(session) {
      const commands = new SessionCommands(session, ctx);
      bySession.set(session, commands);
      return commands;
    },
    send,
    directory: {
      sendCommand(vendorUniqueIdentifier, action, timeoutMs, onProgress) {
        const session = ctx.sessions.holding(vendorUniqueIdentifier);
        if (!session) return Promise.reject(new GatewayUnavailableError(`No connected gateway holds device ${vendorUniqueIdentifier}.`));
        return send(session, vendorUniqueIdentifier, action, timeoutMs, onProgress);
      },
    },
  };
}

class SessionCommands implements SessionChannel {
  private readonly pending = new Map<string, PendingCommand>();

  constructor(private readonly session: GatewaySession, private readonly ctx: ChannelContext) {}

  readonly messages: SessionChannel['messages'] = {
    commandResult: (result) => this.onResult(result),
    commandProgress: ({ commandId, percent }) => {
      // Only a percent the contract allows reaches the job: a gateway's bug cannot move a bar backwards or past 99.
      if (Number.isInteger(percent) && percent >= 0 && percent <= 99) this.pending.get(commandId)?.onProgress?.(percent);
    },
  };

  send(vendorUniqueIdentifier: string, action: CommandAction, timeoutMs: number,
    onProgress?: (percent: number) => void): Promise<CommandResult> {
    const commandId = randomUUID();
    return new Promise<CommandResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(commandId);
        reject(new GatewayUnavailableError(`Gateway ${this.session.gatewayName} did not answer within ${timeoutMs} ms.`));
      }, timeoutMs);
      this.pending.set(commandId, { resolve, reject, timer, onProgress });
      this.session.write({
        body: 'command',
        command: { commandId, vendorUniqueIdentifier, deadlineMs: Date.now() + timeoutMs, ...action },
      });
    });
  }

  ended({ reason, hubStopping }: SessionEnd): void {
    for (const [, command] of this.pending) {
      clearTimeout(command.timer);
      if (!hubStopping) command.reject(new GatewayUnavailableError(`Gateway ${this.session.gatewayName} disconnected (${reason}).`));
    }
    this.pending.clear();
  }

  /**
   * A command's result. When it carries the device's new state (install, uninstall, readPackages), the state is
   * recorded first, behind this gateway's earlier reports, and only then is the command answered: whoever reads
   * the device after the call returns reads the change. A state the records did not take fails the command, so
   * no caller is told of a change its next read would not show.
   */
  private onResult(result: CommandResult): void {
    const state = result.device;
    if (!state?.vendorUniqueIdentifier) {
      this.answer(result);
      return;
    }
    this.session.devices.add(state.vendorUniqueIdentifier);
    void this.session.recordWrite(() => applyDeviceState(this.ctx.db, this.session.gatewayId, state))
      .then((landed) => this.answer(landed ? result : {
        ...result, ok: false, errorCode: 'RECORD_FAILED',
        errorMessage: 'the device carried it out, but the hub could not record the device\'s new state (the hub\'s log says why); '
          + 'read the device again before relying on it',
      }));
  }

  private answer(result: CommandResult): void {
    const command = this.pending.get(result.commandId);
    if (!command) return; // timed out already, or not ours
    this.pending.delete(result.commandId);
    clearTimeout(command.timer);
    command.resolve(result);
  }
}
