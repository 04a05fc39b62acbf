/**
 * The globals the core may use beyond ECMAScript: the ones every browser and Node provide. The
 * core's compiler check (src/tsconfig.json) sees only these, so an import of a Node built-in or
 * a use of a Node-only global anywhere under src/index.ts fails the build.
 */

interface TextDecodeOptions {
  stream?: boolean;
}

interface TextDecoderOptions {
  fatal?: boolean;
  ignoreBOM?: boolean;
}

/** WHATWG Encoding: bytes to text. */
interface TextDecoder {
  readonly encoding: string;
  decode(input?: ArrayBufferView | ArrayBuffer, options?: TextDecodeOptions): string;
}
declare var TextDecoder: { prototype: TextDecoder; new (label?: string, options?: TextDecoderOptions): TextDecoder };

/** WHATWG Encoding: text to UTF-8 bytes. */
interface TextEncoder {
  readonly encoding: string;
  encode(input?: string): Uint8Array;
  encodeInto(source: string, destination: Uint8Array): { read: number; written: number };
}
declare var TextEncoder: { prototype: TextEncoder; new (): TextEncoder };

/** HTML: base64 text to a binary string (one character per byte). */
declare function atob(data: string): string;
