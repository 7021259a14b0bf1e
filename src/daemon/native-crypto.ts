// The daemon's and the CLI's way in to Node's native Ed25519 (src/native/native-crypto.ts, an adapter
// the beacon group also uses). Kept at this path: the verify command's check workers load it by URL.
export { nativeSigner, nativeVerifyDocument, nativeVerifyMessage } from '../native/native-crypto.js'
