/** The CLI answer parsers against the published transcripts quoted in testbench.md 2.2. */
import {
  modeFromFlags, parseErrorLine, parseFlags, parseHealth, parseId, parseState, parseSystem,
} from '../../src/usbhubs/cambrionix/cli-parsers';

it('parses state lines from real hubs, with or without the padded port number', () => {
  expect(parseState(['1, 0000, D O, 0, 0, x, 0.00', '2, 0946, A S, 1, 0, x, 0.10', ' 3, 0429, R A S, 0, 0, x, 0.00',
    '12, 1200, A C, 2, 340, 120, 1.25', 'garbage'])).toEqual([
    { port: 1, milliamps: 0, flags: ['Detached', 'Off'], state: 'Off', chargingProfile: '0', chargingSeconds: 0, attached: false },
    { port: 2, milliamps: 946, flags: ['Attached', 'Sync'], state: 'Data', chargingProfile: '1', chargingSeconds: 0, attached: true },
    { port: 3, milliamps: 429, flags: ['Rebooted', 'Attached', 'Sync'], state: 'Data', chargingProfile: '0', chargingSeconds: 0, attached: true },
    { port: 12, milliamps: 1200, flags: ['Attached', 'ChargeCharging'], state: 'Charge', chargingProfile: '2', chargingSeconds: 340, attached: true },
  ]);
});

it('maps every flag letter, case-sensitively, and the mode they show', () => {
  expect(parseFlags('O S B I P C F A D T E R r')).toEqual([
    'Off', 'Sync', 'Biased', 'ChargeIdle', 'ChargeProfiling', 'ChargeCharging', 'ChargeFinished',
    'Attached', 'Detached', 'Theft', 'Errors', 'Rebooted', 'VBusReset',
  ]);
  expect(modeFromFlags(parseFlags('A B'))).toBe('Data');
  expect(modeFromFlags(parseFlags('D I'))).toBe('Charge');
  expect(modeFromFlags(parseFlags('A P'))).toBe('Charge');
  expect(modeFromFlags(parseFlags('r'))).toBe('Unknown');
});

it('parses id, system and health', () => {
  expect(parseId(['mfr:cambrionix,mode:main,hw:PP15S,hwid:0x13,fw:1.68,bl:0.15,sn:000000,group:-,fc:un']))
    .toEqual({ serialNumber: '000000', model: 'PP15S', firmware: '1.68', manufacturer: 'cambrionix' });
  expect(parseSystem(['cambrionix PP8S 8 Port USB Charge+Sync', 'Hardware: PP8S', 'Firmware: 1.68',
    'Compiled: Feb 14 2017 17:30:26', 'Group: -', 'Panel ID: Absent'])).toEqual({
    description: 'cambrionix PP8S 8 Port USB Charge+Sync', model: 'PP8S', firmware: '1.68', compiled: 'Feb 14 2017 17:30:26',
  });
  expect(parseHealth(['5V Now:   5.13', '5V Min:   5.02', '5V Max:   5.19', '5V Flags:  UV', 'Temperature Now: 31.5',
    'Uptime: 3600', 'Rebooted: 1'])).toEqual({
    fiveVoltNow: 5.13, fiveVoltMin: 5.02, fiveVoltMax: 5.19, temperatureC: 31.5, uptimeSeconds: 3600, rebooted: true, errorFlags: ['UV'],
  });
});

it('recognises error and fatal error lines', () => {
  expect(parseErrorLine('*E410: Port number must be 1..8')).toEqual({ code: 'E410', text: 'Port number must be 1..8', fatal: false });
  expect(parseErrorLine('*FATAL ERROR E500: watchdog')).toEqual({ code: 'E500', text: 'watchdog', fatal: true });
  expect(parseErrorLine(' 1, 0000, D O, 0, 0, x, 0.00')).toBeUndefined();
});
