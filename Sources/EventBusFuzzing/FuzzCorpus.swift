import Foundation

/// The seed corpus: the files of a directory, read whole, in name order.
public enum FuzzCorpus {
    /// Reads every regular file directly in `directory`.
    public static func load(from directory: String) throws -> [[UInt8]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        return try names.compactMap { name in
            let path = directory + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { return nil }
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
    }
}
