/**
 * Metrics: the uplink sends its batches while a verified session is open and hears the hub's acks; the hub's
 * MetricsSettings (devices whose passive logging is off) become the link's `metricsSettings` event.
 */
import type { MetricsUplink } from '../metrics-uplink';
import type { MessageHandlers } from '@devicelab/proto';
import type { ChannelHubMessage, GatewayChannel, HubConnection, LinkSession } from './channel';

export class MetricsChannel implements GatewayChannel {
  constructor(private readonly link: HubConnection, private readonly uplink: MetricsUplink | undefined) {}

  open(session: LinkSession): MessageHandlers<ChannelHubMessage> {
    this.uplink?.linkUp((batch) => session.send({ body: 'metrics', metrics: batch }));
    return {
      metricsAck: ({ sequence }) => this.uplink?.acknowledged(sequence),
      metricsSettings: (settings) => void this.link.emit('metricsSettings', settings),
    };
  }

  down(): void {
    this.uplink?.linkDown();
  }
}
