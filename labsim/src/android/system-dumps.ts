/**
 * `dumpsys window`, `dumpsys power` and `dumpsys deviceidle` as a phone that is awake, unlocked and showing an
 * app answers them: the lines clients parse (lock state, screen on, current focus, display size, wakefulness).
 */
import type { AndroidDeviceSpec } from './spec';

/** What has the focus: the foreground app's package and activity. */
export interface Focus {
  pkg: string;
  activity: string;
}

export function windowDump(spec: AndroidDeviceSpec, size: { width: number; height: number }, focus: Focus): string {
  const { width, height, density } = { ...spec.screen, ...size };
  const component = focus.activity.startsWith(`${focus.pkg}.`) ? `${focus.pkg}/${focus.activity.slice(focus.pkg.length)}` : `${focus.pkg}/${focus.activity}`;
  return [
    'WINDOW MANAGER LAST ANR (dumpsys window lastanr)',
    '  <no ANR has occurred since boot>',
    '',
    'WINDOW MANAGER POLICY STATE (dumpsys window policy)',
    '    mSafeMode=false mSystemReady=true mSystemBooted=true',
    '    mCameraLensCoverState=LENS_COVER_ABSENT',
    '    mWakeGestureEnabledSetting=true',
    '    mKeyguardDrawComplete=true mWindowManagerDrawComplete=true',
    '    mDreamingLockscreen=false',
    '    mScreenOnEarly=true mScreenOnFully=true',
    '    mKeyguardOccluded=false',
    '    KeyguardServiceDelegate',
    '      showing=false',
    '      showingAndNotOccluded=false',
    '      inputRestricted=false',
    '      occluded=false',
    '      secure=false',
    '      dreaming=false',
    '      systemIsReady=true',
    '      deviceHasKeyguard=true',
    '      enabled=true',
    '      offReason=OFF_BECAUSE_OF_USER',
    '      currentUser=0',
    '      bootCompleted=true',
    '      screenState=SCREEN_STATE_ON',
    '      interactiveState=INTERACTIVE_STATE_AWAKE',
    '      KeyguardStateMonitor',
    '        mIsShowing=false',
    '        mSimSecure=false',
    '        mInputRestricted=false',
    '        mTrusted=false',
    '        mCurrentUserId=0',
    '',
    'WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)',
    `  Display: mDisplayId=0 rootTasks=1`,
    `    init=${spec.screen.width}x${spec.screen.height} ${spec.screen.density}dpi cur=${width}x${height} app=${width}x${height} rng=${width}x${Math.round(width * 0.96)}-${height}x${height}`,
    `    deferred=false mLayoutNeeded=false mTouchExcludeRegion=SkRegion((0,0,${width},${height}))`,
    `    mDisplayInfo=DisplayInfo{"Built-in Screen", displayId 0, real ${width} x ${height}, density ${density}}`,
    '',
    `  mCurrentFocus=Window{7b3c2a1 u0 ${component}}`,
    `  mFocusedApp=ActivityRecord{4e1d8f2 u0 ${component} t12}`,
    '',
    'WINDOW MANAGER WINDOWS (dumpsys window windows)',
    `  Window #0 Window{7b3c2a1 u0 ${component}}:`,
    `    mDisplayId=0 rootTaskId=12 mSession=Session{5a7c3e9 0:u0a0} mClient=android.os.BinderProxy@1f0e2d3`,
    `    mHasSurface=true isReadyForDisplay()=true mWindowRemovalAllowed=false`,
    '',
  ].join('\n');
}

export function powerDump(uptimeMs: number): string {
  return [
    'POWER MANAGER (dumpsys power)',
    '',
    'Power Manager State:',
    '  mDirty=0x0',
    '  mWakefulness=Awake',
    '  mWakefulnessChanging=false',
    '  mIsPowered=true',
    '  mPlugType=2',
    '  mBatteryLevel=78',
    '  mStayOn=false',
    '  mProximityPositive=false',
    '  mBootCompleted=true',
    '  mSystemReady=true',
    '  mHalAutoSuspendModeEnabled=false',
    '  mHalInteractiveModeEnabled=true',
    '  mWakeLockSummary=0x0',
    '  mNotifyLongScheduled=(none)',
    '  mRequestWaitForNegativeProximity=false',
    '  mSandmanScheduled=false',
    '  mBatteryLevelLow=false',
    '  mLightDeviceIdleMode=false',
    '  mDeviceIdleMode=false',
    `  mLastWakeTime=${Math.max(0, uptimeMs - 60_000)} (60000 ms ago)`,
    '  mLastSleepTime=0',
    '  mDisplayReady=true',
    '  mHoldingWakeLockSuspendBlocker=false',
    '  mHoldingDisplaySuspendBlocker=true',
    '',
  ].join('\n');
}

/** `dumpsys deviceidle whitelist [+pkg|-pkg ...]`: the packages exempted from Doze. */
export function deviceIdle(args: string[], whitelist: Set<string>, installed: (pkg: string) => boolean): { out: string; code: number } {
  if (args[0] !== 'whitelist') return { out: '', code: 0 };
  const changes = args.slice(1);
  if (!changes.length) return { out: [...whitelist].map((p) => `user,${p},10000\n`).join(''), code: 0 };
  let out = '';
  for (const change of changes) {
    const pkg = change.slice(1);
    if (change.startsWith('+')) {
      if (!installed(pkg)) out += `Unknown package: ${pkg}\n`;
      else {
        whitelist.add(pkg);
        out += `Added: ${pkg}\n`;
      }
    } else if (change.startsWith('-')) {
      out += whitelist.delete(pkg) ? `Removed: ${pkg}\n` : `Unknown package: ${pkg}\n`;
    }
  }
  return { out, code: 0 };
}
