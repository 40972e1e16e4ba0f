#pragma once

// A tagged integer: distinct id/offset types that do not convert into each other silently.
// Arithmetic is limited to what offsets need (+/- an integral delta, ++, comparisons); anything
// else goes through value(). Trivially copyable, so it costs nothing over the raw integer.

#include <compare>
#include <concepts>
#include <cstddef>
#include <functional>
#include <ostream>

namespace spool::broker::model {

template <std::integral T, class Tag>
class strong_int {
public:
    using value_type = T;

    constexpr strong_int() = default;
    constexpr explicit strong_int(T v) : _v(v) {}

    [[nodiscard]] constexpr T value() const { return _v; }
    constexpr explicit operator T() const { return _v; }

    constexpr auto operator<=>(const strong_int&) const = default;

    template <std::integral D>
    constexpr strong_int operator+(D d) const {
        return strong_int(static_cast<T>(_v + d));
    }
    template <std::integral D>
    constexpr strong_int operator-(D d) const {
        return strong_int(static_cast<T>(_v - d));
    }
    // The distance between two values of the same kind is a plain integer.
    constexpr T operator-(strong_int o) const { return _v - o._v; }
    template <std::integral D>
    constexpr strong_int& operator+=(D d) {
        _v = static_cast<T>(_v + d);
        return *this;
    }
    constexpr strong_int& operator++() {
        ++_v;
        return *this;
    }

    friend std::ostream& operator<<(std::ostream& os, strong_int v) { return os << +v._v; }

private:
    T _v{};
};

}  // namespace spool::broker::model

template <std::integral T, class Tag>
struct std::hash<spool::broker::model::strong_int<T, Tag>> {
    size_t operator()(spool::broker::model::strong_int<T, Tag> v) const noexcept {
        return std::hash<T>{}(v.value());
    }
};
