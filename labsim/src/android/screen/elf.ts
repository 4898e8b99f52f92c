/**
 * What the device's loader checks before a pushed native program runs: the ELF header's class and machine
 * against the CPU ABIs the device runs (`ro.product.cpu.abilist`), and for minicap, that the `minicap.so` on
 * LD_LIBRARY_PATH was built for this machine and this Android release. minicap-prebuilt builds one library per
 * SDK level; which one a file is, labsim reads from its SHA-256 (the table below, from minicap-prebuilt 2.7.3: a
 * library is the same file for every SDK it lists). A library not in the table (another minicap build) is taken
 * on its ELF machine alone.
 */
import { createHash } from 'node:crypto';

export interface ElfHeader {
  /** 1: 32-bit, 2: 64-bit. */
  elfClass: number;
  /** ET_EXEC 2 (fixed address, no PIE), ET_DYN 3 (PIE executable or shared library). */
  type: number;
  machine: number;
}

const MACHINE_OF_ABI: Record<string, number> = { 'arm64-v8a': 183, 'armeabi-v7a': 40, armeabi: 40, x86: 3, x86_64: 62 };
const MACHINE_NAME: Record<number, string> = { 183: 'EM_AARCH64', 40: 'EM_ARM', 3: 'EM_386', 62: 'EM_X86_64' };

export function readElfHeader(data: Buffer): ElfHeader | null {
  if (data.length < 20 || data.readUInt32BE(0) !== 0x7f454c46) return null;
  const littleEndian = data[5] === 1;
  return { elfClass: data[4], type: littleEndian ? data.readUInt16LE(16) : data.readUInt16BE(16), machine: littleEndian ? data.readUInt16LE(18) : data.readUInt16BE(18) };
}

/** The device ABI a machine runs as, if the device runs it at all. */
export function abiFor(abis: string[], machine: number): string | undefined {
  return abis.find((abi) => MACHINE_OF_ABI[abi] === machine);
}

export function machineName(machine: number): string {
  return `${MACHINE_NAME[machine] ?? 'EM_UNKNOWN'} (${machine})`;
}

/** SHA-256 prefixes of minicap-prebuilt 2.7.3's `prebuilt/<abi>/lib/android-<sdk>/minicap.so`, with their SDKs. */
const MINICAP_LIBRARIES: Record<string, Record<string, number[]>> = {
  'arm64-v8a': { '815a8b88bf76b054': [21], 'efd5fa7ac0d1d8d5': [22], 'c001a401559e2d13': [23], '6efcd6020f4554d7': [24], '10778d37d862f0e9': [25], 'be6f5157a3e961fa': [26], '0c1063eb4a8a8ac3': [27], '5ef26da932987553': [28], '290ba91af6be6e0e': [29], '21431d953af59d96': [30] },
  'armeabi-v7a': { '76bb604051c4a27c': [9, 10], 'c8206c8f20d2ce4e': [14], '32032eb871f3a0a7': [15], 'f4d2e8631500143d': [16], '3577d1f8d5af3db5': [17], '9dcee5843286035c': [18], '1a264316cc3c6240': [19], 'ace3667d35dc1cb2': [21], '1134bc4b6a0d42ea': [22], '11ef3af63c39a463': [23], '33fdf0f8ab6b9bb3': [24], '6750f946c4f61d27': [25], 'c096c6a1fb134a1f': [26], '8cd1783af6c89de6': [27], 'd607fbf9eb55460f': [28], '0572f0140eb46983': [29], '1a5d84c655f5203f': [30] },
  x86: { '03d3fa6bd33bbca9': [14], '74ea6f6ad4f0517b': [15], '0130adf2d0ac58b0': [16], '59d46c1c1b016f02': [17], 'ea464a9a1d0cc75f': [18], '9cbbf64c486f6b71': [19], '1ab295fa1c874d69': [21], 'a2a69c292d26c4bf': [22], '86372e928fbb05f6': [23], '9faca668d0e69b07': [24], '1893fbd12a04e218': [25], 'de2d8c8d063c866c': [26], '90e1bc247ffea828': [27], 'eea693226226ba31': [28], 'a5bc442c6fe09c42': [29], 'daaee59524710167': [30] },
  x86_64: { 'f7b3e8c47a6f1751': [21], '703affff63d8ae37': [22], '112c18ba1facbfb0': [23], '7ee489b11d971627': [24], 'd5b060c2b34b09e2': [25], 'b850be0ff864194f': [26], 'cfea54444ec7e65b': [27], 'e8384446f58048b7': [28], 'f471a60169d008d3': [29], '4a8eb24b3a5da9bf': [30] },
};

/** The SDK levels a known minicap.so was built for, or undefined for a library not in the table. */
export function minicapLibrarySdks(abi: string, library: Buffer): number[] | undefined {
  const digest = createHash('sha256').update(library).digest('hex').slice(0, 16);
  return MINICAP_LIBRARIES[abi === 'armeabi' ? 'armeabi-v7a' : abi]?.[digest];
}

/** What a program is, read from its contents (labsim runs only the programs it simulates). */
export function identifyProgram(data: Buffer): 'minicap' | 'minitouch' | undefined {
  if (data.includes('minicap_create')) return 'minicap';
  if (data.includes('minitouch') && data.includes('libevdev')) return 'minitouch';
  return undefined;
}
