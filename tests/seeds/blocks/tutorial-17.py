from pto_wsp import TraceLevel

program = workload().compile()
program.enable_tracing(TraceLevel.TIMING)  # or FULL for all details

program.execute()
program.synchronize()

# Print summary
program.trace.print_summary()
