// A plugin is written against EventBusCore's types (``Plugin``, ``PluginEvent``,
// ``PluginOutput``); whoever imports the SDK gets them too.
@_exported import EventBus
@_exported import EventBusCore
