/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_ERROR_H
#define GPU_FABRIC_FABRIC_ERROR_H

#include <fmt/format.h>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief A value as an error message shows it: whole if short, else its
 * first 60 bytes followed by "... (N bytes)", control characters escaped,
 * so that a huge or binary value (a 20 MB edge-list line) keeps the message
 * one readable line.
 * \param text the value
 * \return its text for the message
 */
inline std::string
FabricShownValue(std::string_view text)
{
    constexpr size_t kShown = 60;
    std::string shown;
    for (const char c : text.substr(0, kShown))
    {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\n')
        {
            shown += "\\n";
        }
        else if (u < 0x20 || u == 0x7f)
        {
            shown += fmt::format("\\x{:02x}", u);
        }
        else
        {
            shown += c;
        }
    }
    if (text.size() > kShown)
    {
        shown += fmt::format("... ({} bytes)", text.size());
    }
    return shown;
}

/**
 * \ingroup gpu-fabric
 * \brief Raised for every invalid parameter, preset, file or flag.
 *
 * The message always names the parameter, the value given and what is
 * allowed, so that a scenario script fails with something a user can act on
 * instead of an abort deep inside the simulator.  Examples catch it in main()
 * and exit with status 2.
 */
class FabricConfigError : public std::invalid_argument
{
  public:
    /**
     * \param parameter name of the parameter, attribute, flag or file
     * \param value the offending value, as text (shown cut and escaped, see
     *        FabricShownValue)
     * \param allowed what would have been accepted
     */
    FabricConfigError(std::string_view parameter, std::string_view value, std::string_view allowed)
        : std::invalid_argument(fmt::format("invalid {}: got '{}', allowed: {}",
                                            parameter,
                                            FabricShownValue(value),
                                            allowed)),
          m_parameter(parameter)
    {
    }

    /// \return the name of the parameter that was rejected
    const std::string& Parameter() const
    {
        return m_parameter;
    }

  private:
    std::string m_parameter; //!< name of the rejected parameter
};

/**
 * \brief Text of a value for an error message: fmt where it can, else the
 * type's operator<< (ns-3's DataRate, Time, ...).
 * \param value the value
 * \return its text
 */
template <typename T>
std::string
FabricValueText(const T& value)
{
    if constexpr (fmt::is_formattable<T>::value)
    {
        return fmt::format("{}", value);
    }
    else
    {
        std::ostringstream os;
        os << value;
        return os.str();
    }
}

/**
 * \brief Throw FabricConfigError unless \p condition holds.
 * \param condition the validity condition
 * \param parameter parameter name
 * \param value the value given (anything fmt can format)
 * \param allowed description of what is allowed
 */
template <typename T>
inline void
FabricRequire(bool condition, std::string_view parameter, const T& value, std::string_view allowed)
{
    if (!condition)
    {
        throw FabricConfigError(parameter, FabricValueText(value), allowed);
    }
}

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_ERROR_H
