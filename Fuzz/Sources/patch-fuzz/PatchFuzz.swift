// JSON Patch with any input: `[a, b]` must diff into a patch that turns a into b exactly;
// `[document, patch]` must apply or fail cleanly (RFC 6902), never crash; a patch written
// straight to bytes is exactly its objects' encoding.
import FuzzDriver
import JSONPatch

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard case .array(let pair)? = try? JSONValue(parsing: bytes), pair.count == 2 else { return 0 }
  let (first, second) = (pair[0], pair[1])
  // The server's diff: what it sends must rebuild exactly what it holds.
  let operations = JSONPatch.diff(first, second)
  guard let rebuilt = try? JSONPatch.apply(operations, to: first) else {
    fatalError("A diff does not apply: \(operations.map(\.json))")
  }
  precondition(rebuilt == second, "A diff rebuilt \(rebuilt), not \(second)")
  // The same patch, sent over the wire and read back, is the same patch.
  let wire = JSONValue.array(operations.map(\.json)).encoded
  var written: [UInt8] = []
  PatchOperation.write(operations, to: &written)
  precondition(written == wire, "A patch written directly differs from its objects' encoding")
  if case .array(let read)? = try? JSONValue(parsing: wire) {
    precondition(read.compactMap(PatchOperation.init(json:)).count == operations.count)
  }
  // A client's patch (the second value) on a document (the first): applies or fails cleanly.
  if case .array(let raw) = second {
    let patch = raw.compactMap(PatchOperation.init(json:))
    _ = try? JSONPatch.apply(patch, to: first)
  }
  return 0
}

@_cdecl("patch_fuzz_main")
public func fuzzMain(
  _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> CInt {
  FuzzDriver.run(argc, argv, fuzz)
}
