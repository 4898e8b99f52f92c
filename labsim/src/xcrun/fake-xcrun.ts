/**
 * A fake Xcode for a test or the demo: a state directory for the simulator set and an executable `xcrun` in it
 * that answers `simctl` from that directory (point the gateway's XCRUN_BINARY at it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { shellQuote } from '@devicelab/shared';
import { SimStateStore } from './state';

/** `labsim/bin/xcrun`: runs the compiled fake when built, else the TypeScript sources. */
export const LABSIM_XCRUN = path.join(__dirname, '..', '..', 'bin', 'xcrun');

export interface FakeXcrun {
  /** Executable to use as XCRUN_BINARY. */
  binary: string;
  /** The simulator set (for tests that look at what the gateway did). */
  store: SimStateStore;
}

export function createFakeXcrun(stateDir: string): FakeXcrun {
  fs.mkdirSync(stateDir, { recursive: true });
  const binary = path.join(stateDir, 'xcrun');
  fs.writeFileSync(binary, `#!/bin/sh\nLABSIM_XCRUN_STATE=${shellQuote(stateDir)} exec ${shellQuote(LABSIM_XCRUN)} "$@"\n`, { mode: 0o755 });
  return { binary, store: new SimStateStore(stateDir) };
}

