// A plugin is written against EventBusCore's types (``Plugin``, ``PluginEvent``,
// ``PluginOutput``); whoever imports the SDK gets them too.
@_exported import EventBus
@_exported import EventBusCore
// A plugin with options of its own declares them with swift-argument-parser
// (``PluginArguments``), beside the options every plugin takes.
@_exported import ArgumentParser
