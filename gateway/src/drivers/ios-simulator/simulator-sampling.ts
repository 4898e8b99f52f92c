/**
 * Metrics of a simulator where simctl gives them: `health_check` asks the simulator's launchd for an
 * environment value (`simctl getenv <udid> HOME`), `log` follows `simctl spawn <udid> log stream`. A simulator
 * has no figures of its own for the `sample` table (it shares the Mac's CPU and memory), so no sample rows.
 */
import type { Logger } from '@devicelab/shared';
import type { Simctl } from 'node-simctl';
import { DeviceCommandError, type DeviceSample, type DeviceSampling, type LogFollower, type LogStream } from '../device-driver';
import { messageOf } from './simctl-errors';

type SubProcess = Awaited<ReturnType<Simctl['spawnSubProcess']>>;

export class SimulatorSampling implements DeviceSampling {
  private readonly streams = new Set<SubProcess>();

  constructor(private readonly simctlOf: (id: string) => Simctl, private readonly logger: Logger) {}

  async sample(id: string): Promise<DeviceSample> {
    this.simctlOf(id);
    return { time: Date.now(), fields: {} };
  }

  async probe(id: string, timeoutMs: number): Promise<void> {
    const simctl = this.simctlOf(id);
    try {
      await simctl.exec('getenv', { args: [id, 'HOME'], timeout: timeoutMs });
    } catch (err) {
      throw new DeviceCommandError(`The simulator did not answer: ${messageOf(err)}`, 'DEVICE_TIMEOUT');
    }
  }

  followLog(id: string, follower: LogFollower): LogStream {
    const simctl = this.simctlOf(id);
    let stopped = false;
    let process: SubProcess | undefined;
    const started = simctl.spawnSubProcess(['log', 'stream', '--style', 'compact']).then(async (proc) => {
      process = proc;
      if (stopped) return;
      this.streams.add(proc);
      proc.on('line-stdout', (line: string) => { if (!line.startsWith('Timestamp ') && !line.startsWith('Filtering ')) follower.line(line); });
      proc.once('exit', () => {
        this.streams.delete(proc);
        if (!stopped) follower.end(new Error('log stream ended'));
      });
      await proc.start(0);
    });
    started.catch((err: unknown) => {
      if (!stopped) follower.end(err instanceof Error ? err : new Error(String(err)));
    });
    return {
      stop: () => {
        stopped = true;
        if (process?.isRunning) process.stop('SIGTERM').catch((err: unknown) => this.logger.debug({ err }, 'stopping log stream failed'));
      },
    };
  }

  stopAll(): void {
    for (const proc of this.streams) if (proc.isRunning) void proc.stop('SIGTERM').catch(() => undefined);
    this.streams.clear();
  }
}
