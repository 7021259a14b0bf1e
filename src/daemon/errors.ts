/**
 * Bad input to the node: a config file, a data directory that holds another table's key, a node
 * that cannot be reached through its control file. The CLI shows it as one line and exits 2.
 */
export class NodeInputError extends Error {
  override name = 'NodeInputError'
}
