#if canImport(UIKit) && !os(watchOS)
    import ObjectiveC
    import UIKit

    /// Records sessions, screens and taps by itself, as PBMetrics did: sessions follow the app's
    /// foreground and background notifications; every view controller's `viewDidAppear` and
    /// `viewDidDisappear`, and every control action sent through `UIApplication.sendAction`, are
    /// swizzled to report to the recorder. Install once, early (`application(_:didFinishLaunching…)`).
    /// This file builds only where UIKit exists; the recorder it drives is tested on Linux.
    @MainActor
    public enum AutoTracking {
        nonisolated(unsafe) static var recorder: MetricsRecorder?
        private static var observers: [NSObjectProtocol] = []

        public static func install(_ recorder: MetricsRecorder) {
            guard self.recorder == nil else { return }
            self.recorder = recorder
            let center = NotificationCenter.default
            observers.append(
                center.addObserver(forName: UIApplication.didBecomeActiveNotification, object: nil, queue: .main) { _ in
                    Task { await recorder.startSession() }
                })
            observers.append(
                center.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: .main) {
                    _ in
                    Task {
                        await recorder.endSession()
                        _ = await recorder.flush()
                    }
                })
            swap(
                UIViewController.self, #selector(UIViewController.viewDidAppear(_:)),
                #selector(UIViewController.nohit_viewDidAppear(_:)))
            swap(
                UIViewController.self, #selector(UIViewController.viewDidDisappear(_:)),
                #selector(UIViewController.nohit_viewDidDisappear(_:)))
            swap(
                UIApplication.self, #selector(UIApplication.sendAction(_:to:from:for:)),
                #selector(UIApplication.nohit_sendAction(_:to:from:for:)))
        }

        private static func swap(_ type: AnyClass, _ original: Selector, _ replacement: Selector) {
            guard let a = class_getInstanceMethod(type, original), let b = class_getInstanceMethod(type, replacement)
            else { return }
            method_exchangeImplementations(a, b)
        }
    }

    extension UIViewController {
        @objc func nohit_viewDidAppear(_ animated: Bool) {
            nohit_viewDidAppear(animated)  // the original, exchanged
            let name = String(describing: type(of: self))
            if let recorder = AutoTracking.recorder { Task { await recorder.viewAppeared(name) } }
        }

        @objc func nohit_viewDidDisappear(_ animated: Bool) {
            nohit_viewDidDisappear(animated)
            let name = String(describing: type(of: self))
            let moving = isMovingFromParent
            if let recorder = AutoTracking.recorder {
                Task {
                    await recorder.viewDisappeared(
                        name, properties: ["is_moving_from_parent_view_controller": .bool(moving)])
                }
            }
        }
    }

    extension UIApplication {
        @objc func nohit_sendAction(_ action: Selector, to target: Any?, from sender: Any?, for event: UIEvent?) -> Bool
        {
            let sent = nohit_sendAction(action, to: target, from: sender, for: event)
            let targetName = target.map { String(describing: type(of: $0)) } ?? "nil"
            let actionName = NSStringFromSelector(action)
            if let recorder = AutoTracking.recorder {
                Task { await recorder.touch(action: actionName, target: targetName) }
            }
            return sent
        }
    }
#endif
