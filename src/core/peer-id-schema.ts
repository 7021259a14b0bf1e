import * as z from 'zod'
import { isPeerId } from './identity.js'

/**
 * The one schema for a peer id wherever one is parsed (configs, wire messages, records): a libp2p
 * Ed25519 peer id that decodes to a valid Ed25519 public key (see `isPeerId`), not merely one that
 * looks like it.
 */
export const peerIdSchema = z.string().refine(isPeerId, 'must be an Ed25519 libp2p peer id (12D3KooW…) holding a valid public key')
