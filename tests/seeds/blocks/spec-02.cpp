namespace pto::wsp::ir {
    // IR node types
    // See ir-design.md for details
}

namespace pto::wsp::backend {
    // Backend interface
    // See backend-arch.md for details
}
