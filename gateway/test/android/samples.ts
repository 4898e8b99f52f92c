/** Real sample outputs copied from ../shared/device-data.md section 1 (generated once, then kept as is). */

export const GETPROP_PIXEL7 = `[dalvik.vm.heapgrowthlimit]: [256m]
[dalvik.vm.heapsize]: [512m]
[dev.bootcomplete]: [1]
[gsm.operator.alpha]: [T-Mobile]
[gsm.operator.numeric]: [310260]
[gsm.sim.state]: [LOADED]
[gsm.version.baseband]: [g5300g-230927-231102-B-11034331]
[net.bt.name]: [Android]
[persist.sys.dalvik.vm.lib.2]: [libart.so]
[persist.sys.locale]: [en-US]
[persist.sys.timezone]: [America/New_York]
[persist.sys.usb.config]: [adb]
[ro.adb.secure]: [1]
[ro.board.platform]: [gs201]
[ro.boot.flash.locked]: [1]
[ro.boot.hardware]: [panther]
[ro.boot.hardware.revision]: [MP1.0]
[ro.boot.serialno]: [28121FDH2000QM]
[ro.boot.verifiedbootstate]: [green]
[ro.bootloader]: [cloudripper-1.0-11055807]
[ro.build.characteristics]: [nosdcard]
[ro.build.date]: [Thu Dec 14 18:32:15 UTC 2023]
[ro.build.date.utc]: [1702578735]
[ro.build.description]: [panther-user 14 UQ1A.240205.004 11269751 release-keys]
[ro.build.display.id]: [UQ1A.240205.004]
[ro.build.fingerprint]: [google/panther/panther:14/UQ1A.240205.004/11269751:user/release-keys]
[ro.build.id]: [UQ1A.240205.004]
[ro.build.tags]: [release-keys]
[ro.build.type]: [user]
[ro.build.user]: [android-build]
[ro.build.version.codename]: [REL]
[ro.build.version.incremental]: [11269751]
[ro.build.version.release]: [14]
[ro.build.version.release_or_codename]: [14]
[ro.build.version.sdk]: [34]
[ro.build.version.security_patch]: [2024-02-05]
[ro.com.google.gmsversion]: [14_202312]
[ro.crypto.state]: [encrypted]
[ro.crypto.type]: [file]
[ro.debuggable]: [0]
[ro.hardware]: [panther]
[ro.hardware.egl]: [mali]
[ro.hardware.vulkan]: [mali]
[ro.oem_unlock_supported]: [1]
[ro.opengles.version]: [196610]
[ro.product.board]: [panther]
[ro.product.brand]: [google]
[ro.product.cpu.abi]: [arm64-v8a]
[ro.product.cpu.abilist]: [arm64-v8a]
[ro.product.cpu.abilist32]: []
[ro.product.cpu.abilist64]: [arm64-v8a]
[ro.product.device]: [panther]
[ro.product.first_api_level]: [33]
[ro.product.locale]: [en-US]
[ro.product.manufacturer]: [Google]
[ro.product.model]: [Pixel 7]
[ro.product.name]: [panther]
[ro.revision]: [MP1.0]
[ro.secure]: [1]
[ro.serialno]: [28121FDH2000QM]
[ro.sf.lcd_density]: [420]
[ro.soc.manufacturer]: [Google]
[ro.soc.model]: [GS201]
[ro.treble.enabled]: [true]
[ro.vendor.build.security_patch]: [2024-02-05]
[sys.boot_completed]: [1]
[sys.usb.config]: [adb]
[sys.usb.state]: [adb]
[wifi.interface]: [wlan0]
`;

export const DUMPSYS_BATTERY = `Current Battery Service state:
  AC powered: false
  USB powered: true
  Wireless powered: false
  Dock powered: false
  Max charging current: 500000
 Time when the latest updated value of the Max charging current was sent via battery changed broadcast: +14h58m53s789ms
  Max charging voltage: 5000000
  Charge counter: 1082000
  status: 2
  health: 2
  present: true
  level: 22
  scale: 100
  voltage: 3764
 Time when the latest updated value of the voltage was sent via battery changed broadcast: +14h59m21s407ms
 The last voltage value sent via the battery changed broadcast: 3775
  temperature: 280
  technology: Li-ion
  Charging state: 4
  Charging policy: 2
  Capacity level: 2
`;

export const DF_DATA = `Filesystem       1K-blocks     Used Available Use% Mounted on
/dev/block/dm-48 115091928 63892032  51068440  56% /data
`;

export const PM_LIST_THIRD = `package:/data/app/~~Hh3kT2Xq0yJtN8k1dW4Zgw==/com.example.shop-7bLq9ZkX2m0wA5cR1sYt3g==/base.apk=com.example.shop versionCode:10402
package:/data/app/~~0aPq8YbV6m3kR2Lx5Tf9Jw==/org.mozilla.firefox-3NvY2s8cQ1pL0eZ7hJk4bA==/base.apk=org.mozilla.firefox versionCode:2016003655
`;

export const DUMPSYS_PACKAGE = `Packages:
  Package [com.example.shop] (3f9a2c1):
    userId=10245
    pkg=Package{a81e4b7 com.example.shop}
    codePath=/data/app/~~Hh3kT2Xq0yJtN8k1dW4Zgw==/com.example.shop-7bLq9ZkX2m0wA5cR1sYt3g==
    resourcePath=/data/app/~~Hh3kT2Xq0yJtN8k1dW4Zgw==/com.example.shop-7bLq9ZkX2m0wA5cR1sYt3g==
    legacyNativeLibraryDir=/data/app/~~Hh3kT2Xq0yJtN8k1dW4Zgw==/com.example.shop-7bLq9ZkX2m0wA5cR1sYt3g==/lib
    extractNativeLibs=false
    primaryCpuAbi=arm64-v8a
    secondaryCpuAbi=null
    cpuAbiOverride=null
    versionCode=10402 minSdk=24 targetSdk=34
    minExtensionVersions=[]
    versionName=1.4.2
    usesNonSdkApi=false
    splits=[base]
    apkSigningVersion=2
    flags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]
    privateFlags=[ PRIVATE_FLAG_ACTIVITIES_RESIZE_MODE_RESIZEABLE_VIA_SDK_VERSION ALLOW_AUDIO_PLAYBACK_CAPTURE PRIVATE_FLAG_ALLOW_NATIVE_HEAP_POINTER_TAGGING ]
    forceQueryable=false
    dataDir=/data/user/0/com.example.shop
    supportsScreens=[small, medium, large, xlarge, resizeable, anyDensity]
    timeStamp=2024-03-11 14:22:05
    lastUpdateTime=2024-03-11 14:22:06
    installerPackageName=com.android.shell
    installerPackageUid=2000
    signatures=PackageSignatures{d1e0f3a version:2, signatures:[8a4b2c1d], past signatures:[]}
    installPermissionsFixed=true
    pkgFlags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]
    requested permissions:
      android.permission.INTERNET
    install permissions:
      android.permission.INTERNET: granted=true
    User 0: ceDataInode=16842 installed=true hidden=false suspended=false distractionFlags=0 stopped=false notLaunched=false enabled=0 instant=false virtual=false
      installReason=0
      firstInstallTime=2024-03-11 14:22:06
      uninstallReason=0
      gids=[3003]
      runtime permissions:
`;

export const RESOLVE_ACTIVITY = `$ cmd package resolve-activity --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER com.example.shop
priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false
com.example.shop/.ui.MainActivity
`;

export const AM_START_OK = `Starting: Intent { cmp=com.example.shop/.ui.MainActivity }
Status: ok
LaunchState: COLD
Activity: com.example.shop/.ui.MainActivity
TotalTime: 612
WaitTime: 618
Complete
`;

export const AM_START_ERROR = `Starting: Intent { cmp=com.example.shop/.Nope }
Error type 3
Error: Activity class {com.example.shop/com.example.shop.Nope} does not exist.
`;

export const INSTALL_OUTPUTS = `$ adb install -r app.apk                 # host side, streamed
Performing Streamed Install
Success

$ adb shell pm install -r /data/local/tmp/app.apk
Success

$ adb install app.apk                    # failure: stderr, exit 1
Performing Streamed Install
adb: failed to install app.apk: Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Existing package com.example.shop signatures do not match newer version; ignoring!]
`;

export const LOGCAT = `--------- beginning of main
03-11 14:22:05.123  1234  1250 I ActivityManager: Start proc 5678:com.example.shop/u0a245 for top-activity {com.example.shop/com.example.shop.ui.MainActivity}
03-11 14:22:05.201  5678  5678 D OpenGLRenderer: HWUI GL Pipeline
03-11 14:22:05.874  5678  5702 W System  : A resource failed to call close.
03-11 14:22:06.012  5678  5678 E AndroidRuntime: FATAL EXCEPTION: main
--------- beginning of crash
`;

