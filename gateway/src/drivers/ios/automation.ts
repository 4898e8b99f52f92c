/**
 * iOS automation: the XCUITest driver talking to a WebDriverAgent already running on the device (a Linux gateway
 * cannot build or start it: that needs Xcode). The server gets `appium:webDriverAgentUrl` pointing at a local port
 * forwarded to the device's WebDriverAgent port (8100) through usbmuxd, and the gateway's usbmuxd for anything the
 * driver does over usbmux itself.
 */
import type net from 'node:net';
import type { Logger } from '@devicelab/shared';
import type { DeviceAutomation } from '../device-driver';
import { forwardDevicePort } from './device-port-forward';

/** WebDriverAgent's HTTP port on the device. */
export const WDA_DEVICE_PORT = 8100;

export interface IosAutomationOptions {
  usbmuxdAddress: string;
  /** A raw connection to a port of the device (usbmuxd Connect). */
  connect(udid: string, port: number): Promise<net.Socket>;
  /** The device's iOS version and name as lockdown reported them (a non-macOS host has to name them). */
  facts(udid: string): { platformVersion?: string; deviceName?: string };
  logger: Logger;
}

export function iosAutomation(options: IosAutomationOptions): DeviceAutomation {
  return {
    appiumDriver: 'xcuitest',
    installedForAutomation: 'Nothing to prepare on iOS: WebDriverAgent automates any installed app, so it was installed as usual.',
    capabilities: (id, ports) => {
      const { platformVersion, deviceName } = options.facts(id);
      return {
        platformName: 'iOS',
        'appium:automationName': 'XCUITest',
        'appium:udid': id,
        ...(platformVersion ? { 'appium:platformVersion': platformVersion } : {}),
        ...(deviceName ? { 'appium:deviceName': deviceName } : {}),
        'appium:webDriverAgentUrl': `http://127.0.0.1:${ports.wdaLocalPort}`,
        // The driver forwards WebDriverAgent's MJPEG port itself: to this device's port, not the shared default 9100.
        'appium:mjpegServerPort': ports.mjpegServerPort,
      };
    },
    environment: async () => ({ USBMUXD_SOCKET_ADDRESS: options.usbmuxdAddress }),
    prepare: async (id, ports) => {
      const forward = await forwardDevicePort(ports.wdaLocalPort, () => options.connect(id, WDA_DEVICE_PORT), options.logger);
      return () => forward.close();
    },
  };
}
