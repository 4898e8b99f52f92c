/**
 * The signing certificate of an iOS executable: Mach-O (fat → arm64 slice) → LC_CODE_SIGNATURE → embedded
 * signature SuperBlob (0xfade0cc0) → CMS blob wrapper (0xfade0b01) → the CMS SignedData's certificates. The leaf
 * (non-CA) certificate is the signer. Apple writes the CMS in BER with indefinite lengths, so a small BER walker
 * reads it; the certificates themselves are DER and go to node:crypto's X509Certificate.
 */
import { X509Certificate } from 'node:crypto';

const FAT_MAGIC = 0xcafebabe;
const FAT_MAGIC_64 = 0xcafebabf;
const MH_MAGIC = 0xfeedface;
const MH_MAGIC_64 = 0xfeedfacf;
const CPU_TYPE_ARM64 = 0x0100000c;
const LC_CODE_SIGNATURE = 0x1d;
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_BLOBWRAPPER = 0xfade0b01;

class MachOFormatError extends Error {}

/** The slice to read: arm64 when the binary is fat and has one, else the first (or only) one. */
function selectSlice(binary: Buffer): Buffer {
  if (binary.length < 8) throw new MachOFormatError('executable is truncated');
  const magic = binary.readUInt32BE(0);
  if (magic !== FAT_MAGIC && magic !== FAT_MAGIC_64) return binary;
  const count = binary.readUInt32BE(4);
  const entrySize = magic === FAT_MAGIC ? 20 : 32;
  const slices: { cpu: number; offset: number; size: number }[] = [];
  for (let i = 0; i < count; i++) {
    const at = 8 + i * entrySize;
    if (at + entrySize > binary.length) throw new MachOFormatError('fat header is truncated');
    const cpu = binary.readUInt32BE(at);
    const offset = magic === FAT_MAGIC ? binary.readUInt32BE(at + 8) : Number(binary.readBigUInt64BE(at + 8));
    const size = magic === FAT_MAGIC ? binary.readUInt32BE(at + 12) : Number(binary.readBigUInt64BE(at + 16));
    if (offset + size > binary.length) throw new MachOFormatError('fat slice lies outside the file');
    slices.push({ cpu, offset, size });
  }
  const chosen = slices.find((s) => s.cpu === CPU_TYPE_ARM64) ?? slices[0];
  if (!chosen) throw new MachOFormatError('fat binary has no slices');
  return binary.subarray(chosen.offset, chosen.offset + chosen.size);
}

/** The CMS bytes of the slice's code signature; undefined when unsigned or when the CMS is an empty placeholder. */
function codeSignatureCms(slice: Buffer): Buffer | undefined {
  if (slice.length < 32) throw new MachOFormatError('Mach-O header is truncated');
  const magic = slice.readUInt32LE(0);
  if (magic !== MH_MAGIC && magic !== MH_MAGIC_64) throw new MachOFormatError('not a Mach-O executable');
  const ncmds = slice.readUInt32LE(16);
  let at = magic === MH_MAGIC_64 ? 32 : 28;
  for (let i = 0; i < ncmds; i++) {
    if (at + 8 > slice.length) throw new MachOFormatError('load commands are truncated');
    const cmd = slice.readUInt32LE(at);
    const size = slice.readUInt32LE(at + 4);
    if (size < 8) throw new MachOFormatError('bad load command size');
    if (cmd === LC_CODE_SIGNATURE) {
      const dataOffset = slice.readUInt32LE(at + 8);
      const dataSize = slice.readUInt32LE(at + 12);
      if (dataOffset + dataSize > slice.length) throw new MachOFormatError('code signature lies outside the slice');
      return cmsOfSuperBlob(slice.subarray(dataOffset, dataOffset + dataSize));
    }
    at += size;
  }
  return undefined;
}

function cmsOfSuperBlob(blob: Buffer): Buffer | undefined {
  if (blob.length < 12 || blob.readUInt32BE(0) !== CSMAGIC_EMBEDDED_SIGNATURE) {
    throw new MachOFormatError('code signature is not an embedded signature SuperBlob');
  }
  const count = blob.readUInt32BE(8);
  for (let i = 0; i < count; i++) {
    const index = 12 + i * 8;
    if (index + 8 > blob.length) throw new MachOFormatError('SuperBlob index is truncated');
    const offset = blob.readUInt32BE(index + 4);
    if (offset + 8 > blob.length) continue;
    if (blob.readUInt32BE(offset) !== CSMAGIC_BLOBWRAPPER) continue;
    const length = blob.readUInt32BE(offset + 4);
    if (length <= 8 || offset + length > blob.length) return undefined;
    const cms = blob.subarray(offset + 8, offset + length);
    // Unsigned builds carry a zero-filled placeholder instead of a CMS structure.
    return cms.some((b) => b !== 0) ? cms : undefined;
  }
  return undefined;
}

// ---------- BER ----------

interface BerNode { tag: number; headerStart: number; contentStart: number; contentEnd: number; next: number }

function berNode(buf: Buffer, at: number): BerNode {
  if (at + 2 > buf.length) throw new MachOFormatError('CMS is truncated');
  const tag = buf[at];
  if ((tag & 0x1f) === 0x1f) throw new MachOFormatError('CMS uses high tag numbers');
  const first = buf[at + 1];
  let contentStart = at + 2;
  if (first === 0x80) {
    if ((tag & 0x20) === 0) throw new MachOFormatError('indefinite length on a primitive value');
    let p = contentStart;
    while (!(buf[p] === 0 && buf[p + 1] === 0)) {
      if (p >= buf.length) throw new MachOFormatError('CMS is truncated');
      p = berNode(buf, p).next;
    }
    return { tag, headerStart: at, contentStart, contentEnd: p, next: p + 2 };
  }
  let length = first;
  if (first & 0x80) {
    const bytes = first & 0x7f;
    if (bytes > 4 || contentStart + bytes > buf.length) throw new MachOFormatError('bad BER length');
    length = buf.readUIntBE(contentStart, bytes);
    contentStart += bytes;
  }
  if (contentStart + length > buf.length) throw new MachOFormatError('CMS is truncated');
  return { tag, headerStart: at, contentStart, contentEnd: contentStart + length, next: contentStart + length };
}

function berChildren(buf: Buffer, node: BerNode): BerNode[] {
  const out: BerNode[] = [];
  for (let p = node.contentStart; p < node.contentEnd;) {
    const child = berNode(buf, p);
    out.push(child);
    p = child.next;
  }
  return out;
}

/** The certificates of a CMS SignedData (ContentInfo → [0] → SignedData → [0] IMPLICIT certificates). */
function cmsCertificates(cms: Buffer): X509Certificate[] {
  const contentInfo = berNode(cms, 0);
  const explicit = berChildren(cms, contentInfo).find((n) => n.tag === 0xa0);
  if (!explicit) throw new MachOFormatError('CMS has no content');
  const signedData = berChildren(cms, explicit)[0];
  if (!signedData || signedData.tag !== 0x30) throw new MachOFormatError('CMS content is not SignedData');
  const set = berChildren(cms, signedData).find((n) => n.tag === 0xa0);
  if (!set) return [];
  const certificates: X509Certificate[] = [];
  for (const node of berChildren(cms, set)) {
    if (node.tag !== 0x30) continue;
    try {
      certificates.push(new X509Certificate(cms.subarray(node.headerStart, node.next)));
    } catch {
      // Not a DER X.509 certificate (e.g. an attribute certificate): not a candidate signer.
    }
  }
  return certificates;
}

/** The signer: the certificate that is not a CA and issued none of the others. */
function leafCertificate(certificates: X509Certificate[]): X509Certificate | undefined {
  const notCa = certificates.filter((c) => !c.ca);
  const leaves = notCa.filter((c) => !certificates.some((other) => other !== c && other.checkIssued(c)));
  return leaves[0] ?? notCa[0];
}

export function commonName(certificate: X509Certificate): string | undefined {
  const line = certificate.subject.split('\n').find((l) => l.startsWith('CN='));
  return line?.slice(3);
}

/** Signing certificate of a Mach-O executable, or undefined when it carries none. */
export function signingCertificate(executable: Buffer): X509Certificate | undefined {
  const cms = codeSignatureCms(selectSlice(executable));
  return cms ? leafCertificate(cmsCertificates(cms)) : undefined;
}
