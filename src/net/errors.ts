import { InputError } from '../core/errors.js'

/**
 * Bad input to the network adapter: an unusable listen address, an unsafe or corrupt identity file,
 * a malformed peer id, a frame over the size limit. Its message is one line meant for a person;
 * the CLI prints it without a stack trace.
 */
export class NetInputError extends InputError {
  override name = 'NetInputError'
}

/** The identity key file cannot be used as it is (permissions, corruption, wrong key type). */
export class IdentityFileError extends NetInputError {
  override name = 'IdentityFileError'
}

/** A frame could not be handed to `peer`: it is unreachable, refused the protocol, or dropped the stream twice. */
export class SendError extends Error {
  override name = 'SendError'
  readonly peer: string
  constructor (message: string, peer: string, options?: ErrorOptions) {
    super(message, options)
    this.peer = peer
  }

  /** True when no dial was tried: the peer is not connected and has no known address. */
  get unrouted (): boolean { return this.cause instanceof NoRouteError }
}

/**
 * The cause of a SendError when nothing was even dialled: the peer is not connected and no address
 * is known for it (a seat behind NAT that has not dialled in). `SendError.unrouted` tells it apart.
 */
export class NoRouteError extends Error {
  override name = 'NoRouteError'
}
