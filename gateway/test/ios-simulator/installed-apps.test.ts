/** `simctl listapps` text (Foundation's old-style plist, as Xcode 15/16 print it) read into installed packages. */
import { packagesFromListapps } from '../../src/drivers/ios-simulator/installed-apps';

const LISTAPPS = `{
    "com.apple.mobilesafari" =     {
        ApplicationType = System;
        Bundle = "file:///Library/Developer/CoreSimulator/Volumes/iOS_21F79/Library/Developer/CoreSimulator/Profiles/Runtimes/iOS%2017.5.simruntime/Contents/Resources/RuntimeRoot/Applications/MobileSafari.app/";
        CFBundleDisplayName = Safari;
        CFBundleExecutable = MobileSafari;
        CFBundleIdentifier = "com.apple.mobilesafari";
        CFBundleName = Safari;
        CFBundleVersion = "8618.2.12.10.5";
        DataContainer = "file:///Users/ci/Library/Developer/CoreSimulator/Devices/5E3C1F0A/data/Containers/Data/Application/9B0E/";
        GroupContainers =         {
            "group.com.apple.mobilesafari" = "file:///Users/ci/Library/Developer/CoreSimulator/Devices/5E3C1F0A/data/Containers/Shared/AppGroup/1A2B/";
        };
        Path = "/Library/Developer/CoreSimulator/Volumes/iOS_21F79/.../MobileSafari.app";
        SBAppTags =         (
        );
    };
    "org.example.\\"quoted\\"" =     {
        ApplicationType = User;
        CFBundleIdentifier = "org.example.quoted";
        CFBundleShortVersionString = "2.0";
        CFBundleVersion = 200;
        SBAppTags =         (
            hidden,
            "x y"
        );
        Icon = <89504e47 0d0a1a0a>;
    };
}
`;

test('reads bundle ids, versions and which apps are system apps', () => {
  expect(packagesFromListapps(LISTAPPS)).toEqual([
    { identifier: 'com.apple.mobilesafari', version: '', buildVersion: '8618.2.12.10.5', system: true },
    { identifier: 'org.example.quoted', version: '2.0', buildVersion: '200', system: false },
  ]);
});

test('text that is no property list is a clear failure, not a crash', () => {
  expect(() => packagesFromListapps('{ "a" = { b = c; ')).toThrow(/simctl listapps printed what the gateway cannot read/);
  expect(packagesFromListapps('{\n}\n')).toEqual([]);
});
