/**
 * Metrics: the gateway's batches are stored in a write lane of their own and acknowledged (the ack is the
 * gateway's backpressure), and each gateway hears which devices' passive logging is off (MetricsSettings) after
 * Welcome and whenever it is switched.
 */
import type { MetricsBatch } from '@devicelab/proto';
import { MetricsReceiver } from '../../metrics/link-ingest';
import type { GatewaySession } from '../gateway-session';
import type { ChannelContext, HubChannel } from '../link/channel';

export function metricsChannel(ctx: ChannelContext): HubChannel {
  const receivers = new WeakMap<GatewaySession, MetricsReceiver>();

  const sendSettings = async (session: GatewaySession): Promise<void> => {
    const receiver = receivers.get(session);
    if (!receiver) return;
    try {
      session.write({ body: 'metricsSettings', metricsSettings: await receiver.settings() });
    } catch (err) {
      ctx.logger.warn({ gateway: session.gatewayName, err }, 'could not send metrics settings');
    }
  };

  /**
   * Stores a batch after the record writes that came before it, so its devices' rows exist; in its own lane, so
   * the batches never queue ahead of a device's state. No ack while the database is unreachable.
   */
  const receive = (session: GatewaySession, receiver: MetricsReceiver, batch: MetricsBatch): void => {
    void ctx.writes.enqueue(session.gatewayId, async () => {
      const sequence = await receiver.receive(batch);
      session.write({ body: 'metricsAck', metricsAck: { sequence } });
    }, 'metrics');
  };

  return {
    open(session) {
      const receiver = new MetricsReceiver(ctx.db, ctx.metrics, session.gateway, ctx.logger);
      receivers.set(session, receiver);
      return {
        messages: { metrics: (batch) => receive(session, receiver, batch) },
        welcomed: () => void sendSettings(session),
      };
    },
    directory: {
      notifyMetricsSettings() {
        for (const session of ctx.sessions.all()) void sendSettings(session);
      },
    },
  };
}
