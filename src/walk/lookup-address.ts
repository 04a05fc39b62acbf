/** Where a frame's function is looked up: the one rule lives in the unwind layer (../unwind/lookup-address.ts). */
export { lookupAddress } from "../unwind/lookup-address.js";
