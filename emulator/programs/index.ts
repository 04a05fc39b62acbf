/** Program builders for the emulator: declarative call-chain specs turned into runnable images with their unwind data. */
export {
  X86_IMAGE_BASE,
  X86_STACK_RESERVE,
  buildX86Program,
  checkX86Program,
  type X86CallingConvention,
  type X86FrameStyle,
  type X86FunctionSpec,
  type X86Program,
  type X86ProgramSpec,
  type X86SavedRegister,
  type X86Symbol,
} from "./x86-chain.js";
export { ALLOCA, EBP_CHAIN_5, FPO_LEAF, FPO_USEBP, MIXED_8, RECURSION_1000, STDCALL, X86_CORPUS_SPECS } from "./x86-corpus.js";
