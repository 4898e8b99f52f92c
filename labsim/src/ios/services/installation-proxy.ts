/**
 * com.apple.mobile.installation_proxy: Browse (pages of BrowsingApplications, then Complete), Lookup, Install /
 * Upgrade of a package AFC put under Media (progress messages with PercentComplete, then Complete or an Error
 * with ErrorDescription and ErrorDetail), and Uninstall. Status names and percentages follow a real iOS 17 device.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { selectAttributes, type ApplicationType } from '../apps';
import { INSTALL_ERRORS, type SimIosDevice } from '../device';
import { IpaError, IpaInfo, readIpa } from '../ipa';
import { type ByteLink, attachPlistChannel } from '../plist-channel';
import { type PlistDict, decodePlistDict, isDict } from '@devicelab/shared';

const INSTALL_STEPS: [string, number][] = [
  ['CreatingStagingDirectory', 5], ['ExtractingPackage', 15], ['InspectingPackage', 20], ['TakingInstallLock', 20],
  ['PreflightingApplication', 30], ['InstallingEmbeddedProfile', 30], ['VerifyingApplication', 40], ['CreatingContainer', 50],
  ['InstallingApplication', 60], ['PostflightingApplication', 70], ['SandboxingApplication', 80], ['GeneratingApplicationMap', 90],
];
/** The step after which an injected failure is reported (installd verifies the signature there). */
const VERIFY_STEP = 'VerifyingApplication';
const UNINSTALL_STEPS: [string, number][] = [['RemovingApplication', 50], ['GeneratingApplicationMap', 90]];
const BROWSE_PAGE = 20;

export function serveInstallationProxy(device: SimIosDevice, link: ByteLink): void {
  const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, device.installStepMs));
  const channel = attachPlistChannel(link, async (message) => {
    const options = isDict(message.ClientOptions) ? message.ClientOptions : {};
    const send = (fields: PlistDict): void => channel.send(fields);
    const error = (name: string, description: string, detail?: number): void =>
      send({ Error: name, ErrorDescription: description, ...(detail !== undefined ? { ErrorDetail: detail } : {}) });
    switch (message.Command) {
      case 'Browse': {
        const apps = listApps(device, options);
        for (let index = 0; index < apps.length; index += BROWSE_PAGE) {
          const page = apps.slice(index, index + BROWSE_PAGE).map((a) => selectAttributes(a, options.ReturnAttributes));
          send({ CurrentAmount: page.length, CurrentIndex: index, CurrentList: page, Status: 'BrowsingApplications', Total: apps.length });
        }
        return send({ Status: 'Complete' });
      }
      case 'Lookup': {
        const result: PlistDict = {};
        for (const app of listApps(device, options)) result[app.bundleId] = selectAttributes(app, options.ReturnAttributes);
        return send({ LookupResult: result, Status: 'Complete' });
      }
      case 'Install':
      case 'Upgrade': {
        let ipa: IpaInfo;
        let packageBytes: number;
        const packagePath = typeof message.PackagePath === 'string' ? message.PackagePath : '';
        try {
          ({ ipa, packageBytes } = readPackage(device.mediaRoot, packagePath));
        } catch (e) {
          if (e instanceof IpaError) return error(e.errorName, e.message);
          throw e;
        }
        const minimumOs = ipa.infoPlist.MinimumOSVersion;
        for (const [status, percent] of INSTALL_STEPS) {
          await pause();
          send({ PercentComplete: percent, Status: status });
          if (status !== VERIFY_STEP) continue;
          const injected = device.takeInstallFailure();
          if (injected) return error(injected, INSTALL_ERRORS[injected][1], INSTALL_ERRORS[injected][0]);
          if (typeof minimumOs === 'string' && compareVersions(minimumOs, device.spec.productVersion) > 0) {
            const [code, description] = INSTALL_ERRORS.DeviceOSVersionTooLow;
            return error('DeviceOSVersionTooLow', `${description} (${minimumOs} > ${device.spec.productVersion})`, code);
          }
        }
        device.apps.install(ipa, packageBytes);
        fs.rmSync(path.join(device.mediaRoot, packagePath), { recursive: true, force: true });
        device.syslog.log({ process: 'installd', pid: 45, level: 'Notice', message: `Installed ${ipa.bundleId} from ${packagePath}` });
        return send({ Status: 'Complete' });
      }
      case 'Uninstall': {
        const bundleId = typeof message.ApplicationIdentifier === 'string' ? message.ApplicationIdentifier : '';
        if (device.apps.get(bundleId)?.type === 'System') return error('UninstallProhibited', `Uninstall of ${bundleId} is not allowed`);
        for (const [status, percent] of UNINSTALL_STEPS) {
          await pause();
          send({ PercentComplete: percent, Status: status });
        }
        if (device.apps.uninstall(bundleId)) {
          device.syslog.log({ process: 'installd', pid: 45, level: 'Notice', message: `Uninstalled ${bundleId}` });
        }
        return send({ Status: 'Complete' });
      }
      default:
        return error('UnknownCommand', `Unknown command ${String(message.Command)}`);
    }
  });
}

function listApps(device: SimIosDevice, options: PlistDict) {
  const type = options.ApplicationType === 'User' || options.ApplicationType === 'System' ? (options.ApplicationType as ApplicationType) : 'Any';
  const wanted = Array.isArray(options.BundleIDs) ? new Set(options.BundleIDs.filter((b): b is string => typeof b === 'string')) : null;
  return device.apps.list(type).filter((a) => !wanted || wanted.has(a.bundleId));
}

/** An uploaded .ipa file, or an uploaded .app folder (PackageType Developer). */
function readPackage(mediaRoot: string, packagePath: string): { ipa: IpaInfo; packageBytes: number } {
  const full = path.resolve(mediaRoot, `./${path.posix.normalize(`/${packagePath}`)}`);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(full);
  } catch {
    throw new IpaError('PackageExtractionFailed', `Could not find the package at ${packagePath}`);
  }
  if (stat.isDirectory()) {
    const infoPath = path.join(full, 'Info.plist');
    if (!fs.existsSync(infoPath)) throw new IpaError('PackageInspectionFailed', `No Info.plist in ${packagePath}`);
    const infoPlist = decodePlistDict(fs.readFileSync(infoPath));
    const bundleId = infoPlist.CFBundleIdentifier;
    if (typeof bundleId !== 'string') throw new IpaError('PackageInspectionFailed', 'Info.plist has no CFBundleIdentifier');
    return { ipa: { bundleId, appFolder: path.basename(full), infoPlist }, packageBytes: 0 };
  }
  return { ipa: readIpa(fs.readFileSync(full)), packageBytes: stat.size };
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] || 0) - (pb[i] || 0);
    if (d) return d;
  }
  return 0;
}
