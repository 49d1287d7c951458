from pto_wsp import (
    PtoError,
    CompileError,
    TypeCheckError,
    IRConversionError,
    ExecutionError,
    KernelError,
    ScheduleError,
    ChannelError,
    ChannelClosed,
    ChannelFull,
)

try:
    program = schedule.compile()
    program.execute()
except CompileError as e:
    print(f"Compilation failed: {e}")
except ExecutionError as e:
    print(f"Execution failed: {e}")
except ChannelClosed as e:
    print(f"Channel closed: {e}")
