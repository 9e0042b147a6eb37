// Any bytes into the JSON parser: it must answer (a value or an error), never crash, hang or
// read out of bounds; and whatever it parses must come back the same from its own output, and
// the same when salvaged.
import FuzzDriver
import JSONPatch

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  // NB: the reading of refused documents (a message's ref) gets the same bytes.
  let salvaged = JSONValue.salvaging(bytes)
  guard let value = try? JSONValue(parsing: bytes) else { return 0 }
  precondition(
    salvaged == value, "Salvaging changed a sound document into \(String(describing: salvaged))")
  let written = value.encoded
  guard let again = try? JSONValue(parsing: written) else {
    fatalError("The parser refuses its own output: \(String(decoding: written, as: UTF8.self))")
  }
  precondition(again == value, "A round trip changed \(value) into \(again)")
  // Every pointer into it resolves.
  walk(value, at: JSONPointer(), root: value)
  return 0
}

private func walk(_ value: JSONValue, at pointer: JSONPointer, root: JSONValue, depth: Int = 0) {
  guard depth < 64 else { return }
  // NB: `!= nil` would compare with JSON's null (JSONValue is ExpressibleByNilLiteral).
  let found = JSONValue.array([root]).value(at: JSONPointer(tokens: ["0"] + pointer.tokens))
  precondition(found.map { $0 == value } ?? false, "\(pointer) does not resolve")
  precondition(JSONPointer(pointer.description) == pointer, "\(pointer) does not read back")
  switch value {
  case .array(let elements):
    for (index, element) in elements.enumerated() {
      walk(element, at: pointer.appending(index), root: root, depth: depth + 1)
    }
  case .object(let members):
    for (key, member) in members {
      walk(member, at: pointer.appending(key), root: root, depth: depth + 1)
    }
  default:
    break
  }
}

@_cdecl("json_fuzz_main")
public func fuzzMain(
  _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> CInt {
  FuzzDriver.run(argc, argv, fuzz)
}
