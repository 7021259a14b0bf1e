// The rule lives in the core, where the verifier checks a REVEAL's stages against it.
export { INITIAL_STAGES } from '../core/hand/stages.js'
