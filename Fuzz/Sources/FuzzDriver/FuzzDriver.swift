// libFuzzer's driver, for the fuzz targets' entry points: SwiftPM links an executable's
// entry as `<module>_main`, which each target defines by handing its callback to `run`.

@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(
  _ argc: UnsafeMutablePointer<CInt>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
  _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// Runs libFuzzer with the command line, calling `callback` with each input.
public func run(
  _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
  _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt {
  var argc = argc
  var argv = argv
  return runDriver(&argc, &argv, callback)
}
