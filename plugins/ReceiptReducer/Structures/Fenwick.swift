/// A Fenwick (binary indexed) tree of `Int32` counts that can grow at the end.
///
/// Elements are indexed from 0. `prefix(n)` is the sum of the first `n`
/// elements; `add`, `append`, `prefix` and `select` are O(log n).
struct Fenwick: Sendable {
    /// 1-based tree; `tree[0]` is unused.
    private(set) var tree: [Int32] = [0]
    /// The sum of every element.
    private(set) var total: Int = 0

    /// The number of elements.
    var count: Int { tree.count - 1 }

    /// An empty tree.
    init() {}

    /// A tree over `values`, built in O(n).
    init(_ values: [Int32]) {
        tree.reserveCapacity(values.count + 1)
        tree.append(contentsOf: values)
        let n = values.count
        var sum = 0
        for value in values { sum += Int(value) }
        total = sum
        if n > 0 {
            for i in 1...n {
                let j = i + (i & -i)
                if j <= n { tree[j] &+= tree[i] }
            }
        }
    }

    /// Appends an element with `value`.
    mutating func append(_ value: Int32) {
        let j = tree.count
        var sum = value
        var k = j - 1
        let stop = j - (j & -j)
        while k > stop {
            sum &+= tree[k]
            k -= k & -k
        }
        tree.append(sum)
        total += Int(value)
    }

    /// Adds `delta` to element `index`.
    mutating func add(_ index: Int, _ delta: Int32) {
        var i = index + 1
        let n = tree.count
        while i < n {
            tree[i] &+= delta
            i += i & -i
        }
        total += Int(delta)
    }

    /// The sum of the first `n` elements (elements `0..<n`).
    func prefix(_ n: Int) -> Int {
        var i = min(n, tree.count - 1)
        var sum = 0
        while i > 0 {
            sum += Int(tree[i])
            i -= i & -i
        }
        return sum
    }

    /// The smallest index `i` such that `prefix(i + 1) >= k`, for `1 <= k <= total`
    /// (with non-negative elements: the index of the `k`-th unit).
    func select(_ k: Int) -> Int {
        let n = tree.count - 1
        var position = 0
        var remaining = k
        var step = 1
        while step * 2 <= n { step *= 2 }
        while step > 0 {
            let next = position + step
            if next <= n && Int(tree[next]) < remaining {
                position = next
                remaining -= Int(tree[next])
            }
            step /= 2
        }
        return position  // 0-based index of the element where the prefix reaches k
    }
}
