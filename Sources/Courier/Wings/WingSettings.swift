/// The wings' settings in a ``ClientConfiguration``: each wing keeps one value of a type of its own
/// here (a module cannot add stored properties to the configuration), behind the public properties
/// it adds to ``ClientConfiguration``. Empty unless a wing's setting was set.
package struct WingSettings: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]
    /// The wings whose settings were set, each with a key of its own to name in errors: a client
    /// refuses settings of a wing the runtime did not find (see ``Wing``).
    package private(set) var owners: [ObjectIdentifier: String] = [:]

    package init() {}

    /// The settings of type `Settings`, `nil` when none were set.
    package subscript<Settings: Sendable>(_ type: Settings.Type) -> Settings? {
        values[ObjectIdentifier(type)] as? Settings
    }

    /// The settings of type `Settings` that `wing` keeps (`key` names them in errors); `value` when
    /// none were set, so one field can be changed.
    package subscript<Settings: Sendable>(
        _ type: Settings.Type, of wing: any Wing.Type, key key: String, default value: @autoclosure () -> Settings
    ) -> Settings {
        get { self[type] ?? value() }
        set {
            values[ObjectIdentifier(type)] = newValue
            owners[ObjectIdentifier(wing)] = key
        }
    }
}

/// What the wings' keys read from one source so far (see ``ConfigurationLoad/wings``), until their
/// ``Wing/finishLoading(_:)`` applies it: a value of a type of each wing's own.
package struct WingLoadState {
    private var values: [ObjectIdentifier: Any] = [:]

    package init() {}

    /// The state of type `State`, `nil` when the source named none of the wing's keys yet.
    package subscript<State>(_ type: State.Type) -> State? {
        get { values[ObjectIdentifier(type)] as? State }
        set { values[ObjectIdentifier(type)] = newValue }
    }
}
