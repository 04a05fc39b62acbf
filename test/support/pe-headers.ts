/** The PE headers the unwinders read of a test image: DOS stub pointer, signature, machine, optional header magic, SizeOfImage and NumberOfRvaAndSizes (16). */

/** Writes them into `bytes` (zeroed) for `machine` (IMAGE_FILE_MACHINE value), PE32 or PE32+. */
export function writePeHeaders(bytes: Uint8Array, machine: number, imageSize: number, format: "pe32" | "pe32+"): DataView {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const plus = format === "pe32+";
  bytes[0] = 0x4d;
  bytes[1] = 0x5a;
  v.setUint32(0x3c, 0x40, true);
  v.setUint32(0x40, 0x4550, true);
  v.setUint16(0x44, machine, true);
  v.setUint16(0x54, plus ? 240 : 224, true);
  const oh = 0x58;
  v.setUint16(oh, plus ? 0x20b : 0x10b, true);
  v.setUint32(oh + 56, imageSize, true);
  v.setUint32(oh + (plus ? 108 : 92), 16, true);
  return v;
}
