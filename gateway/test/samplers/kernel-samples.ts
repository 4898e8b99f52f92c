/** Real outputs copied from ../shared/device-data.md sections 1.2-1.8 (kept as is; `...` elisions included). */

export const MEMINFO_ARM64 = `MemTotal:        7645196 kB
MemFree:          231848 kB
MemAvailable:    3102520 kB
Buffers:            6264 kB
Cached:          2894012 kB
SwapCached:        40220 kB
Active:          2404160 kB
Inactive:        2473824 kB
Active(anon):     981440 kB
Inactive(anon):  1102368 kB
Active(file):    1422720 kB
Inactive(file):  1371456 kB
Unevictable:      183296 kB
Mlocked:          183080 kB
SwapTotal:       4194300 kB
SwapFree:        2688940 kB
Dirty:               412 kB
Writeback:             0 kB
AnonPages:       2221676 kB
Mapped:          1176324 kB
Shmem:             15792 kB
KReclaimable:     331448 kB
Slab:             592316 kB
SReclaimable:     162604 kB
SUnreclaim:       429712 kB
KernelStack:       79808 kB
ShadowCallStack:   19968 kB
PageTables:       150236 kB
NFS_Unstable:          0 kB
Bounce:                0 kB
WritebackTmp:          0 kB
CommitLimit:     8016896 kB
Committed_AS:  158932560 kB
VmallocTotal:   263061440 kB
VmallocUsed:      227712 kB
VmallocChunk:          0 kB
Percpu:            10240 kB
AnonHugePages:         0 kB
ShmemHugePages:        0 kB
ShmemPmdMapped:        0 kB
FileHugePages:         0 kB
FilePmdMapped:         0 kB
CmaTotal:         204800 kB
CmaFree:            2892 kB\n`;

export const MEMINFO_ARM32 = `MemTotal:        1857124 kB
MemFree:           88420 kB
MemAvailable:     712356 kB
Buffers:           10212 kB
Cached:           654320 kB
SwapCached:         4208 kB
Active:           770144 kB
Inactive:         512060 kB
Active(anon):     431788 kB
Inactive(anon):   190232 kB
Active(file):     338356 kB
Inactive(file):   321828 kB
Unevictable:        1036 kB
Mlocked:            1036 kB
HighTotal:       1179648 kB
HighFree:          31204 kB
LowTotal:         677476 kB
LowFree:           57216 kB
SwapTotal:        524284 kB
SwapFree:         392104 kB
Dirty:                96 kB
Writeback:             0 kB
AnonPages:        618496 kB
Mapped:           288144 kB
Shmem:              3728 kB
Slab:              77984 kB
SReclaimable:      28180 kB
SUnreclaim:        49804 kB
KernelStack:       20640 kB
PageTables:        31172 kB
NFS_Unstable:          0 kB
Bounce:                0 kB
WritebackTmp:          0 kB
CommitLimit:     1452844 kB
Committed_AS:   58012344 kB
VmallocTotal:     245760 kB
VmallocUsed:      112436 kB
VmallocChunk:      97284 kB\n`;

export const PROC_STAT = `cpu  4705320 233091 2380562 61293817 85321 411263 93651 0 0 0
cpu0 1015226 46672 601305 6967384 25683 102331 52178 0 0 0
cpu1 ...
cpu7 ...
intr 1117046542 0 0 ...
ctxt 1781284219
btime 1710153725
processes 1125478
procs_running 3
procs_blocked 0
softirq 423154851 ...\n`;

export const PROC_STAT_T0_T1 = `t0: cpu  4705320 233091 2380562 61293817 85321 411263 93651 0 0 0
t1: cpu  4705732 233109 2380798 61294659 85330 411304 93673 0 0 0
delta: user 412 nice 18 system 236 idle 842 iowait 9 irq 41 softirq 22 steal 0
total = 412+18+236+842+9+41+22+0 = 1580\n`;

export const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:  1948713   18467    0    0    0     0          0         0  1948713   18467    0    0    0     0       0          0
dummy0:        0       0    0    0    0     0          0         0     1400      20    0    0    0     0       0          0
 wlan0: 98765432   74321    0   12    0     0          0         0 12345678   41210    0    0    0     0       0          0
rmnet_data0: 20480311   19810    0    0    0     0          0         0  3311022   15004    0    0    0     0       0          0
  p2p0:        0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0\n`;

export const GFXINFO_ANDROID_7 = `Applications Graphics Acceleration Info:
Uptime: 27522172 Realtime: 73274303

** Graphics info for pid 18222 [com.example.shop] **

Stats since: 9858093255087ns
Total frames rendered: 2546
Janky frames: 203 (7.97%)
90th percentile: 14ms
95th percentile: 20ms
99th percentile: 53ms
Number Missed Vsync: 42
Number High input latency: 0
Number Slow UI thread: 82
Number Slow bitmap uploads: 13
Number Slow issue draw commands: 108

Caches:
Current memory usage / total memory usage (bytes):
  TextureCache          1636784 / 75497472
  LayerCache                  0 / 50331648 (numLayers = 0)
  Layers total          0 (numLayers = 0)
  RenderBufferCache           0 /  8388608
  GradientCache               0 /  1048576
  PathCache                   0 / 33554432
  TessellationCache           0 /  1048576
  TextDropShadowCache         0 /  6291456
  PatchCache               8448 /   131072
  FontRenderer 0 A8     1048576 /  1048576
  FontRenderer 0 RGBA         0 /        0
  FontRenderer 0 total  1048576 /  1048576
Other:
  FboCache                    0 /        0
Total memory usage:
  2693808 bytes, 2.57 MB

Profile data in ms:

	com.example.shop/com.example.shop.ui.MainActivity/android.view.ViewRootImpl@51687fd (visibility=0)
Stats since: 9858093255087ns
Total frames rendered: 2546
Janky frames: 203 (7.97%)
...
View hierarchy:

  com.example.shop/com.example.shop.ui.MainActivity/android.view.ViewRootImpl@51687fd
  224 views, 212.96 kB of display lists


Total ViewRootImpl: 1
Total Views:        224
Total DisplayList:  212.96 kB\n`;

export const GFXINFO_ANDROID_10 = `Applications Graphics Acceleration Info:
Uptime: 26510658 Realtime: 26510658

** Graphics info for pid 12017 [com.example.shop] **

Stats since: 26391827273400ns
Total frames rendered: 3878
Janky frames: 169 (4.36%)
50th percentile: 17ms
90th percentile: 18ms
95th percentile: 19ms
99th percentile: 30ms
Number Missed Vsync: 5
Number High input latency: 6903
Number Slow UI thread: 21
Number Slow bitmap uploads: 1
Number Slow issue draw commands: 148
Number Frame deadline missed: 169
HISTOGRAM: 5ms=47 6ms=6 7ms=2 ... 4950ms=0
50th gpu percentile: 4ms
90th gpu percentile: 7ms
95th gpu percentile: 9ms
99th gpu percentile: 14ms
GPU HISTOGRAM: 1ms=410 2ms=933 ... 25ms=0 4950ms=0

Pipeline=Skia (OpenGL)
Font Cache (CPU):
  Size: 155.49 kB 
  Glyph Count: 55 
CPU Caches:
GPU Caches:
  Other:
    Buffer Object: 48.00 KB (1 entry)
  Image:
    Texture: 1.88 MB (6 entries)
  Scratch:
    Texture: 4.00 MB (1 entry)
    RenderTarget: 2.50 MB (2 entries)
Other Caches:
                         Current / Maximum
  VectorDrawableAtlas   0.00 kB /   0.00 KB (entries = 0)
  Layers Total           0.00 KB (numLayers = 0)
Total GPU memory usage:
  8782272 bytes, 8.38 MB (6.50 MB is purgeable)

Profile data in ms:
...\n`;

export const GFXINFO_ANDROID_14 = `Applications Graphics Acceleration Info:
Uptime: 314436624 Realtime: 1105003132

** Graphics info for pid 31185 [com.example.shop] **

Stats since: 314435469478872ns
Total frames rendered: 51
Janky frames: 9 (17.65%)
Janky frames (legacy): 13 (25.49%)
50th percentile: 7ms
90th percentile: 48ms
95th percentile: 109ms
99th percentile: 300ms
Number Missed Vsync: 7
Number High input latency: 83
Number Slow UI thread: 9
Number Slow bitmap uploads: 0
Number Slow issue draw commands: 2
Number Frame deadline missed: 9
Number Frame deadline missed (legacy): 9
HISTOGRAM: 5ms=6 6ms=14 7ms=6 8ms=5 9ms=3 10ms=3 ... 300ms=1 ... 4950ms=0
50th gpu percentile: 5ms
90th gpu percentile: 7ms
95th gpu percentile: 8ms
99th gpu percentile: 8ms
GPU HISTOGRAM: 1ms=3 2ms=6 3ms=8 4ms=8 5ms=6 6ms=11 7ms=6 8ms=3 9ms=0 ... 25ms=0 4950ms=0

Pipeline=Skia (OpenGL)
Memory policy:
  Max surface area: 3389760
  Max resource usage: 162.71MB (x48)
  Background retention: 50% (altUiHidden = true)
  GPU Context timeout: 10
Contexts: 1 (stopped = 0)
CPU Caches:
  Glyph Cache: 41.78 KB (1 entry)
  Glyph Count: 13 
Total CPU memory usage:
  42779 bytes, 41.78 KB (0.00 bytes is purgeable)
GPU Caches:
  Other:
    Other: 3.84 KB (1 entry)
    Buffer Object: 13.50 KB (2 entries)
  SW Path Mask:
    Texture: 31.38 KB (9 entries)
  Image:
    Texture: 2.31 MB (11 entries)
  Scratch:
    RenderTarget: 28.53 MB (7 entries)
    Texture: 2.00 MB (10 entries)
    Buffer Object: 78.00 KB (2 entries)
Layer Info:
    GlLayer size 1440x2354
  Layers Total         13241.25 KB (numLayers = 1)
Total GPU memory usage:
  34570008 bytes, 32.97 MB (30.83 MB is purgeable)

Profile data in ms:

	com.example.shop/com.example.shop.ui.MainActivity/android.view.ViewRootImpl@e418670 (visibility=0)
Window: com.example.shop/com.example.shop.ui.MainActivity
Stats since: 314435469478872ns
Total frames rendered: 51
Janky frames: 9 (17.65%)
...
View hierarchy:

  com.example.shop/com.example.shop.ui.MainActivity/android.view.ViewRootImpl@e418670
  413 views, 594.63 kB of render nodes


Total ViewRootImpl   : 1
Total attached Views : 413
Total RenderNode     : 595.86 kB (used) / 1204.11 kB (capacity)\n`;
