import ArgumentParser

/// A plugin's command line: the options every plugin takes (``PluginOptions``) beside the
/// plugin's own, for ``PluginMain/run(_:arguments:_:)``.
///
/// ```swift
/// struct ReadPrivacyOptions: PluginArguments {
///     @OptionGroup var plugin: PluginOptions
///     @Flag(help: "A viewer with read receipts off sees nobody's read receipts in one-to-one channels.")
///     var reciprocity = false
/// }
///
/// await PluginMain.run(ReadPrivacyOptions.self) { options in
///     PrivacyFilter(policy: .read, reciprocity: options.reciprocity)
/// }
/// ```
public protocol PluginArguments: ParsableArguments {
    /// The options every plugin takes: `@OptionGroup var plugin: PluginOptions`.
    var plugin: PluginOptions { get }
}
