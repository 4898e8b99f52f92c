/** Structured logs (pino), quiet by default: `DEVICELAB_LOG_LEVEL=info|debug` to see more. */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(component: string, level = process.env.DEVICELAB_LOG_LEVEL ?? 'warn'): Logger {
  return pino({ name: component, level });
}
