/**
 * A command the gateway reports failed becomes the client's failure: the code goes to `errorCode` when it is one of
 * the catalog's, and the text reads as it did before failures had codes (clients match it).
 */
import type { CommandAction, CommandResult } from '@devicelab/proto';
import { commandFailure } from '../../src/domain/gateway-commands';

const install = { action: 'install' } as CommandAction;
const launch = { action: 'launch' } as CommandAction;
const failed = (errorMessage: string, errorCode: string): CommandResult =>
  ({ commandId: '1', ok: false, errorMessage, errorCode, text: '' });
const seen = (action: CommandAction, result: CommandResult) => {
  const failure = commandFailure(action, "device 'Pixel 7'", result);
  return { message: failure.message, code: failure.code };
};

test("the device's own code: in the text already, and the failure's code", () => {
  expect(seen(install, failed('Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE]', 'INSTALL_FAILED_INSUFFICIENT_STORAGE'))).toEqual({
    message: "Installing the application on device 'Pixel 7' failed: Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE]",
    code: 'INSTALL_FAILED_INSUFFICIENT_STORAGE',
  });
});

test("the gateway's code is named in the text, as it always was", () => {
  expect(seen(install, failed('Device X did not answer within 30 s', 'DEVICE_TIMEOUT'))).toEqual({
    message: "Installing the application on device 'Pixel 7' failed: Device X did not answer within 30 s (DEVICE_TIMEOUT)",
    code: 'DEVICE_TIMEOUT',
  });
});

test('codes failures gained with the catalog leave the text as it was', () => {
  expect(seen(launch, failed('No launchable activity found for com.example.app', 'APP_NOT_LAUNCHABLE'))).toEqual({
    message: "Launching the application on device 'Pixel 7' failed: No launchable activity found for com.example.app",
    code: 'APP_NOT_LAUNCHABLE',
  });
  expect(seen(install, failed('Installing failed on the device (ApplicationVerificationFailed: bad signature)',
    'INSTALLD_ApplicationVerificationFailed'))).toEqual({
    message: "Installing the application on device 'Pixel 7' failed: Installing failed on the device (ApplicationVerificationFailed: bad signature)",
    code: 'INSTALLD_ApplicationVerificationFailed',
  });
});

test("a code outside the catalog (a gateway of another version) stays in the text only", () => {
  expect(seen(install, failed('The hub connection was lost', 'closed'))).toEqual({
    message: "Installing the application on device 'Pixel 7' failed: The hub connection was lost (closed)",
    code: undefined,
  });
});
