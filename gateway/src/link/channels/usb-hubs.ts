/** USB hubs: their state goes up after every (re)connect and every change, with the events the link missed. */
import type { UsbHubService } from '../../usbhubs/usb-hub-service';
import type { GatewayChannel, HubConnection, LinkSession } from './channel';

export class UsbHubsChannel implements GatewayChannel {
  constructor(link: HubConnection, private readonly usbHubs: UsbHubService | undefined) {
    usbHubs?.subscribe({
      report: (report) => link.send({ body: 'usbHubs', usbHubs: report }),
      event: (usbHubEvent) => link.send({ body: 'usbHubEvent', usbHubEvent }),
    });
  }

  open(session: LinkSession): void {
    if (!this.usbHubs) return;
    session.send({ body: 'usbHubs', usbHubs: this.usbHubs.resend() });
    for (const usbHubEvent of this.usbHubs.takePendingEvents()) session.send({ body: 'usbHubEvent', usbHubEvent });
  }
}
