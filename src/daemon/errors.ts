import { InputError } from '../core/errors.js'

/**
 * Bad input to the node: a config file, a data directory that holds another table's key, a node
 * that cannot be reached through its control file. The CLI shows it as one line and exits 2.
 */
export class NodeInputError extends InputError {
  override name = 'NodeInputError'
}

/**
 * A request that does not say which of the node's tables it is for when the node serves several
 * (`missing`), or names one the node does not serve (`unknown`). The message lists the tables.
 */
export class TableChoiceError extends InputError {
  override name = 'TableChoiceError'
  constructor (message: string, readonly kind: 'missing' | 'unknown') { super(message) }
}
