/**
 * Commands: each hub Command runs through the command executor (the device's driver, or the USB hubs); its
 * progress and result go back on the session that asked for it.
 */
import type { Command, MessageHandlers } from '@devicelab/proto';
import type { Logger } from '@devicelab/shared';
import { CommandExecutor } from '../command-executor';
import type { ChannelHubMessage, GatewayChannel, LinkSession } from './channel';
import type { InventoryChannel } from './inventory';

export class CommandsChannel implements GatewayChannel {
  constructor(private readonly executor: CommandExecutor, private readonly inventory: InventoryChannel, private readonly logger: Logger) {}

  open(session: LinkSession): MessageHandlers<ChannelHubMessage> {
    return { command: (command) => void this.run(session, command) };
  }

  private async run(session: LinkSession, command: Command): Promise<void> {
    const result = await this.executor.execute(command, (percent) =>
      session.send({ body: 'commandProgress', commandProgress: { commandId: command.commandId, percent } }));
    if (!session.send({ body: 'commandResult', commandResult: result })) {
      this.logger.warn({ command: command.commandId }, 'command finished after the link was lost; result dropped');
      // The device changed all the same: a later session (a restarted hub) records its new state.
      if (result.device) this.inventory.deviceChanged(result.device);
    }
  }
}
