// The few Web platform globals the core may use: present in every browser and in Node >= 20.
// Declared here because the core is type-checked without Node or DOM typings (tsconfig.core.json).
declare global {
  class TextEncoder { encode (input?: string): Uint8Array }
  class TextDecoder {
    constructor (label?: string, options?: { fatal?: boolean })
    decode (input?: Uint8Array): string
  }
}
export {}
