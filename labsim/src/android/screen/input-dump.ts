/**
 * `dumpsys input`, the parts a reader of the display's rotation looks at: the touch screen (`touch_dev` on
 * /dev/input/event2, the device minitouch finds) in the Event Hub and the Input Reader, its viewport and the
 * orientation line in the form of the device's release: `SurfaceOrientation: 1` up to Android 12 (SDK 32),
 * `InputDeviceOrientation: 1` on 13 and 14, `InputDeviceOrientation: Rotation90` from 15 (SDK 35).
 */
import type { DeviceScreen } from './device-screen';
import { TOUCH_MAX_X, TOUCH_MAX_Y } from './minitouch';

export function dumpsysInput(screen: DeviceScreen, sdk: number): string {
  const quarter = screen.rotation;
  const [w, h] = [screen.displayWidth, screen.displayHeight];
  const viewport = `Viewport INTERNAL: displayId=0, uniqueId=local:4619827259835644672, port=130, orientation=${quarter}, `
    + `logicalFrame=[0, 0, ${w}, ${h}], physicalFrame=[0, 0, ${w}, ${h}], deviceSize=[${w}, ${h}], isActive=[1]`;
  const orientation = sdk <= 32 ? [
    `      SurfaceWidth: ${w}px`, `      SurfaceHeight: ${h}px`, '      SurfaceLeft: 0', '      SurfaceTop: 0',
    `      SurfaceOrientation: ${quarter}`,
  ] : [
    `      DisplayBounds: ${w}x${h}`, `      PhysicalFrameInRotatedDisplay: [0, 0, ${w}, ${h}]`,
    `      InputDeviceOrientation: ${sdk >= 35 ? `Rotation${quarter * 90}` : quarter}`,
  ];
  return [
    'INPUT MANAGER (dumpsys input)',
    '',
    'Input Manager State:',
    `  Interactive: ${screen.isOn}`,
    '  System UI Lights Out: false',
    '  Pointer Speed: 0',
    '  Pointer Gestures Enabled: true',
    '  Show Touches: false',
    '  Pointer Capture: Disabled, seq=0',
    '',
    'Event Hub State:',
    '  BuiltInKeyboardId: -2',
    '  Devices:',
    '    -1: Virtual',
    '      Classes: KEYBOARD | ALPHAKEY',
    '      Path: <virtual>',
    '      Enabled: true',
    '    2: touch_dev',
    '      Classes: TOUCH | TOUCH_MT',
    '      Path: /dev/input/event2',
    '      Enabled: true',
    '      Location: ',
    '      Identifier: bus=0x0000, vendor=0x0000, product=0x0000, version=0x0000',
    '',
    'Input Reader State (Nums of device: 2):',
    '  Device 2: touch_dev',
    '    EventHub Devices: [ 2 ] ',
    '    Generation: 3',
    '    IsExternal: false',
    '    AssociatedDisplayPort: <none>',
    '    HasMic:     false',
    '    Sources: TOUCHSCREEN',
    '    KeyboardType: None',
    '    Touch Input Mapper (mode - DIRECT):',
    '      Parameters:',
    '        GestureMode: MULTI_TOUCH',
    '        DeviceType: TOUCH_SCREEN',
    '        OrientationAware: true',
    '        Orientation: 0',
    '      Raw Touch Axes:',
    `        X: min=0, max=${TOUCH_MAX_X}, flat=0, fuzz=0, resolution=0`,
    `        Y: min=0, max=${TOUCH_MAX_Y}, flat=0, fuzz=0, resolution=0`,
    `      ${viewport}`,
    ...orientation,
    '  Configuration:',
    '    ExcludedDeviceNames: []',
    '    Viewports:',
    `      ${viewport}`,
    '',
    'Input Dispatcher State:',
    '  DispatchEnabled: true',
    '  DispatchFrozen: false',
    '',
  ].join('\n');
}
